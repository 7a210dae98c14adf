import { useState } from 'react';
import { useNavigate } from 'react-router';
import { updateProfileInfo } from '../../api/iam';
import { Field } from '../../components/fields';
import { SubmitButton, useForm } from '../../components/form';
import { PageHeader } from '../../components/sections';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { validateUsername } from '../../lib/validation';
import { toast } from '../../stores/feedback';
import { updateUserInfo, useSession } from '../../stores/session';

export default function UsernamePage() {
  const t = useT();
  const navigate = useNavigate();
  const current = useSession((s) => s.userInfo.name);
  const [name, setName] = useState(current);
  const form = useForm<'username'>({
    validate: () => ({ username: validateUsername(name) }),
    action: async () => {
      const profile = await updateProfileInfo(name.trim());
      updateUserInfo({ name: profile?.name ?? name.trim() });
      toast('success', t('username_changed'));
      navigate(paths.console.account());
    },
    serverErrorField: 'username',
  });
  return (
    <div className="page narrow">
      <PageHeader title={t('change_username')} />
      <form className="card form-card" onSubmit={form.submit} noValidate>
        <Field label={t('username')} name="username" autoComplete="username" value={name} onChange={(e) => setName(e.target.value)} error={form.error('username')} hint={t('username_rule')} />
        <div className="row-actions">
          <SubmitButton form={form}>{t('save')}</SubmitButton>
          <button type="button" className="button ghost" onClick={() => navigate(paths.console.account())}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </div>
  );
}
