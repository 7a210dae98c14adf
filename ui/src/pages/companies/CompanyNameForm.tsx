import { useState } from 'react';
import { Field } from '../../components/fields';
import { FormCard, useForm } from '../../components/form';
import { useT } from '../../lib/i18n';
import { validateCompanyName } from '../../lib/validation';

/** A form with the company name field (create, rename): `save` gets the trimmed, valid name. */
export function CompanyNameForm({
  id,
  title,
  submitLabel,
  initial = '',
  save,
}: {
  id: string;
  title: string;
  submitLabel: string;
  initial?: string;
  save: (name: string) => Promise<void>;
}) {
  const t = useT();
  const [name, setName] = useState(initial);
  const form = useForm<'name'>({
    validate: () => ({ name: validateCompanyName(name) }),
    action: () => save(name.trim()),
    serverErrorField: 'name',
  });
  return (
    <FormCard id={id} title={title} submitLabel={submitLabel} form={form}>
      <Field label={t('company_name')} value={name} onChange={(e) => setName(e.target.value)} error={form.error('name')} maxLength={50} />
    </FormCard>
  );
}
