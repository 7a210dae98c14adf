import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { changePassword, logout } from '../../api/iam';
import { errorText } from '../../api/client';
import { useT } from '../../lib/i18n';
import { PageHeader, PasswordField } from '../../components/ui';
import { toast } from '../../stores/feedback';
import { clearSession } from '../../stores/session';
import { paths } from '../../lib/paths';
import type { MessageKey } from '../../i18n';
import { validateConfirm, validateNewPassword, validatePasswordPresent } from '../../lib/validation';

export default function PasswordPage() {
  const t = useT();
  const navigate = useNavigate();
  const [f, setF] = useState({ old: '', next: '', confirm: '' });
  const [errors, setErrors] = useState<Partial<Record<'old' | 'next' | 'confirm', MessageKey | null>>>({});
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next = {
      old: validatePasswordPresent(f.old),
      next: validateNewPassword(f.next),
      confirm: validateConfirm(f.next, f.confirm),
    };
    setErrors(next);
    if (next.old || next.next || next.confirm) return;
    setBusy(true);
    setServerError(null);
    try {
      await changePassword(f.old, f.next, f.confirm);
      toast('success', t('password_changed'));
      // The server keeps this session after a password change (only the others end); this page
      // asks for a fresh sign-in, so end it on the server too.
      await logout().catch(() => undefined);
      clearSession();
      navigate(paths.auth.signIn(), { replace: true });
    } catch (err) {
      setServerError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const err = (k: 'old' | 'next' | 'confirm') => (errors[k] ? t(errors[k]!) : undefined);
  return (
    <div className="page narrow">
      <PageHeader title={t('change_password')} />
      <form className="card form-card" onSubmit={submit} noValidate>
        <PasswordField label={t('old_password')} autoComplete="current-password" value={f.old} onChange={(e) => setF({ ...f, old: e.target.value })} error={err('old')} />
        <PasswordField label={t('new_password')} autoComplete="new-password" value={f.next} onChange={(e) => setF({ ...f, next: e.target.value })} error={err('next')} hint={t('password_rule')} />
        <PasswordField label={t('confirm_password')} autoComplete="new-password" value={f.confirm} onChange={(e) => setF({ ...f, confirm: e.target.value })} error={err('confirm')} />
        {serverError ? (
          <p className="form-error" role="alert">
            {serverError}
          </p>
        ) : null}
        <button type="submit" className="button primary" disabled={busy}>
          {t('save')}
        </button>
      </form>
    </div>
  );
}
