import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { signIn } from '../../api/iam';
import { errorText } from '../../api/client';
import { useBoot } from '../../app/boot';
import { useT } from '../../app/i18n';
import { applySession, safeRedirect } from '../../app/session';
import { Field, PasswordField } from '../../components/ui';
import { toast } from '../../stores/feedback';
import { paths } from '../../paths';
import type { MessageKey } from '../../i18n';
import { validateEmail, validatePasswordPresent } from './validation';

export function SignInPage() {
  const t = useT();
  const boot = useBoot();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<{ email?: MessageKey | null; password?: MessageKey | null }>({});
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next = { email: validateEmail(email), password: validatePasswordPresent(password) };
    setErrors(next);
    if (next.email || next.password) return;
    setBusy(true);
    setServerError(null);
    try {
      const session = await signIn(email.trim(), password);
      applySession(session);
      toast('success', t('signed_in'));
      navigate(safeRedirect(params.get('redirect'), paths.console.app), { replace: true });
    } catch (err) {
      setServerError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="auth-card card">
      <h1>{t('sign_in_title', { product: boot.productName })}</h1>
      <form onSubmit={submit} noValidate>
        <Field
          label={t('email')}
          type="email"
          name="email"
          autoComplete="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={errors.email ? t(errors.email) : undefined}
        />
        <PasswordField
          label={t('password')}
          name="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={errors.password ? t(errors.password) : undefined}
        />
        {serverError ? (
          <p className="form-error" role="alert">
            {serverError}
          </p>
        ) : null}
        <button type="submit" className="button primary full" disabled={busy}>
          {t('sign_in_action')}
        </button>
      </form>
      <p className="auth-switch">
        {t('no_account')} <Link to={paths.auth.signUp}>{t('sign_up')}</Link>
      </p>
    </section>
  );
}
