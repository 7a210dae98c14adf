import { useState } from 'react';
import { useNavigate } from 'react-router';
import { changePassword, logout } from '../../api/iam';
import { PasswordField } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { PageHeader } from '../../components/sections';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { validateConfirm, validateNewPassword, validatePasswordPresent } from '../../lib/validation';
import { toast } from '../../stores/feedback';
import { clearSession } from '../../stores/session';

export default function PasswordPage() {
  const t = useT();
  const navigate = useNavigate();
  const [f, setF] = useState({ old: '', next: '', confirm: '' });
  const form = useForm<'old' | 'next' | 'confirm'>({
    validate: () => ({
      old: validatePasswordPresent(f.old),
      next: validateNewPassword(f.next),
      confirm: validateConfirm(f.next, f.confirm),
    }),
    action: async () => {
      await changePassword(f.old, f.next, f.confirm);
      toast('success', t('password_changed'));
      // The server keeps this session after a password change (only the others end); this page
      // asks for a fresh sign-in, so end it on the server too.
      await logout().catch(() => undefined);
      clearSession();
      navigate(paths.auth.signIn(), { replace: true });
    },
    serverFields: { old_password: 'old', new_password: 'next', confirm_password: 'confirm' },
  });
  return (
    <div className="page narrow">
      <PageHeader title={t('change_password')} />
      <form className="card form-card" onSubmit={form.submit} noValidate>
        <p className="muted">{t('password_change_note')}</p>
        <PasswordField label={t('old_password')} autoComplete="current-password" value={f.old} onChange={(e) => setF({ ...f, old: e.target.value })} error={form.error('old')} />
        <PasswordField label={t('new_password')} autoComplete="new-password" value={f.next} onChange={(e) => setF({ ...f, next: e.target.value })} error={form.error('next')} hint={t('password_rule')} />
        <PasswordField label={t('confirm_password')} autoComplete="new-password" value={f.confirm} onChange={(e) => setF({ ...f, confirm: e.target.value })} error={form.error('confirm')} />
        <FormError form={form} />
        <SubmitButton form={form}>{t('save')}</SubmitButton>
      </form>
    </div>
  );
}
