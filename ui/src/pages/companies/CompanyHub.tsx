// The person's side of companies: create one, apply to one by its id, answer invitations, see
// one's applications, switch into or leave one's companies. Shown on /company-email (also from a
// phone) and on /history.
import { useEffect, useState } from 'react';
import { applyToCompany, createCompany, leaveCompany } from '../../api/companies';
import { PERSONAL_SME_ID } from '../../constants';
import { useT } from '../../lib/i18n';
import { reloadOrganizations, switchCompany } from '../../api/sessionActions';
import { ConfirmDialog } from '../../components/Dialog';
import { Field } from '../../components/fields';
import { toast, withLoading } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import type { Organization } from '../../api/types';
import { RecordsSection } from './RecordsTable';
import { CompanyNameForm } from './CompanyNameForm';
import { FormCard, useForm } from '../../components/form';
import { Section } from '../../components/sections';
import { toastFailure } from '../../stores/feedback';
import { useConfirm } from '../../components/Dialog';

export function CreateCompanyForm() {
  const t = useT();
  return (
    <CompanyNameForm
      id="create-company-title"
      title={t('create_company')}
      submitLabel={t('create')}
      save={async (name) => {
        const company = await withLoading(() => createCompany(name));
        toast('success', t('company_created'));
        await withLoading(() => switchCompany(company.id));
      }}
    />
  );
}

export function ApplyForm({ onApplied }: { onApplied: () => void }) {
  const t = useT();
  const [id, setId] = useState('');
  const form = useForm<'id'>({
    validate: () => ({ id: id.trim() ? null : 'company_id_required' }),
    action: async () => {
      await withLoading(() => applyToCompany(id.trim()));
      toast('success', t('applied_toast'));
      setId('');
      onApplied();
    },
    serverErrorField: 'id',
  });
  return (
    <FormCard id="apply-title" title={t('apply_to_company')} submitLabel={t('apply')} form={form}>
      <Field label={t('company_id')} value={id} onChange={(e) => setId(e.target.value)} error={form.error('id')} hint={t('apply_hint')} />
    </FormCard>
  );
}

export function MyCompanies() {
  const t = useT();
  const orgs = useSession((s) => s.organizationList).filter((o) => o.id !== PERSONAL_SME_ID);
  const smeId = useSession((s) => s.smeId);
  // Joined elsewhere (another tab, the mailed link in another browser): shown here at once (issue 26).
  useEffect(() => {
    void reloadOrganizations().catch(() => undefined);
  }, []);
  const leave = useConfirm(async (org: Organization) => {
    await withLoading(() => leaveCompany(org.id));
    toast('success', t('left_company'));
    if (org.id === smeId) await withLoading(() => switchCompany(PERSONAL_SME_ID));
    else await reloadOrganizations();
  });
  return (
    <Section className="card" id="my-companies-title" title={t('my_companies')}>
      {orgs.length === 0 ? (
        <p className="muted">{t('no_companies')}</p>
      ) : (
        <ul className="company-list">
          {orgs.map((o) => (
            <li key={o.id} className="list-row">
              <span>
                <strong>{o.name}</strong>
                <br />
                <code className="muted small-text">{o.id}</code>
              </span>
              <span className="row-actions">
                {o.id !== smeId ? (
                  <button type="button" className="button primary small" onClick={() => void toastFailure(() => withLoading(() => switchCompany(o.id)))}>
                    {t('switch_to')}
                  </button>
                ) : null}
                <button type="button" className="button ghost small" onClick={() => leave.ask(o)}>
                  {t('leave')}
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog {...leave.dialog} title={t('leave')} text={t('confirm_leave', { name: leave.subject?.name ?? '' })} confirmLabel={t('leave')} />
    </Section>
  );
}

/** The caller's own invitations and applications. */
export function MyRecords({ nonce = 0 }: { nonce?: number }) {
  const t = useT();
  return (
    <RecordsSection
      id="my-records-title"
      title={t('my_records')}
      scope="mine"
      showCompany
      emptyIcon="company"
      nonce={nonce}
      onAnswered={(_r, a) => {
        if (a === 'accept') void reloadOrganizations().catch(() => undefined);
      }}
    />
  );
}

export function CompanyHub() {
  const [nonce, setNonce] = useState(0);
  return (
    <div className="stack">
      <MyRecords nonce={nonce} />
      <div className="grid-2">
        <ApplyForm onApplied={() => setNonce((n) => n + 1)} />
        <CreateCompanyForm />
      </div>
      <MyCompanies />
    </div>
  );
}
