import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { resetPassword } from '../../api/iam';
import { PasswordField } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Icon } from '../../components/Icon';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useBoot } from '../../stores/boot';
import { validateConfirm, validateNewPassword } from '../../lib/validation';
import { clearSession } from '../../stores/session';

/** The mailed reset link: a new password, once; every session of the account ends. */
export function ResetPasswordPage() {
  const t = useT();
  // A phone signs in on its own sign-in page (issue 41).
  const phone = useBoot().isMobile;
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [f, setF] = useState({ password: '', confirm: '' });
  const [done, setDone] = useState(false);
  const form = useForm<'password' | 'confirm'>({
    validate: () => ({
      form: token ? null : 'reset_link_missing',
      password: validateNewPassword(f.password),
      confirm: validateConfirm(f.password, f.confirm),
    }),
    action: async () => {
      await resetPassword(token, f.password, f.confirm);
      // This browser's session ended with all the others.
      clearSession();
      setDone(true);
    },
    serverFields: { password: 'password', confirm_password: 'confirm' },
  });
  if (done) {
    return (
      <section className="auth-card card center-text" aria-live="polite">
        <span className="big-icon success">
          <Icon name="success" size={32} />
        </span>
        <h1>{t('password_reset_done')}</h1>
        <p>{t('password_reset_done_text')}</p>
        <Link className="button primary" to={(phone ? paths.mobile.signIn : paths.auth.signIn)()}>
          {t('sign_in')}
        </Link>
      </section>
    );
  }
  return (
    <section className="auth-card card">
      <h1>{t('reset_password')}</h1>
      <form onSubmit={form.submit} noValidate>
        <PasswordField
          label={t('new_password')}
          name="password"
          autoComplete="new-password"
          value={f.password}
          onChange={(e) => setF({ ...f, password: e.target.value })}
          error={form.error('password')}
          hint={t('password_rule')}
        />
        <PasswordField
          label={t('confirm_password')}
          name="confirm_password"
          autoComplete="new-password"
          value={f.confirm}
          onChange={(e) => setF({ ...f, confirm: e.target.value })}
          error={form.error('confirm')}
        />
        <FormError form={form} />
        <SubmitButton form={form} className="button primary full">
          {t('set_new_password')}
        </SubmitButton>
      </form>
      <p className="auth-switch">
        <Link to={paths.auth.forgot()}>{t('ask_new_link')}</Link>
      </p>
    </section>
  );
}
