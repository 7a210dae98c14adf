import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { register } from '../../api/iam';
import { errorText } from '../../api/client';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { Field, PasswordField } from '../../components/ui';
import { paths } from '../../lib/paths';
import type { MessageKey } from '../../i18n';
import { validateConfirm, validateEmail, validateNewPassword, validateUsername } from '../../lib/validation';

type Errors = Partial<Record<'email' | 'username' | 'password' | 'confirm' | 'agree', MessageKey | null>>;

export function SignUpPage() {
  const t = useT();
  const boot = useBoot();
  const navigate = useNavigate();
  const [form, setForm] = useState({ email: '', username: '', password: '', confirm: '', agree: false });
  const [errors, setErrors] = useState<Errors>({});
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next: Errors = {
      email: validateEmail(form.email),
      username: validateUsername(form.username, false),
      password: validateNewPassword(form.password),
      confirm: validateConfirm(form.password, form.confirm),
      agree: form.agree ? null : 'agree_required',
    };
    setErrors(next);
    if (Object.values(next).some(Boolean)) return;
    setBusy(true);
    setServerError(null);
    try {
      const res = await register({
        email: form.email.trim(),
        password: form.password,
        confirm_password: form.confirm,
        username: form.username.trim() || undefined,
        agree: true,
      });
      navigate(paths.checkEmail(res?.email ?? form.email.trim()), { replace: true });
    } catch (err) {
      setServerError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const err = (k: keyof Errors) => (errors[k] ? t(errors[k]!) : undefined);
  return (
    <section className="auth-card card">
      <h1>{t('sign_up_title', { product: boot.productName })}</h1>
      <form onSubmit={submit} noValidate>
        <Field
          label={t('email')}
          type="email"
          name="email"
          autoComplete="email"
          value={form.email}
          onChange={(e) => setForm({ ...form, email: e.target.value })}
          error={err('email')}
        />
        <Field
          label={t('username_optional')}
          name="username"
          autoComplete="username"
          value={form.username}
          onChange={(e) => setForm({ ...form, username: e.target.value })}
          error={err('username')}
          hint={t('username_rule')}
        />
        <PasswordField
          label={t('password')}
          name="password"
          autoComplete="new-password"
          value={form.password}
          onChange={(e) => setForm({ ...form, password: e.target.value })}
          error={err('password')}
          hint={t('password_rule')}
        />
        <PasswordField
          label={t('confirm_password')}
          name="confirm_password"
          autoComplete="new-password"
          value={form.confirm}
          onChange={(e) => setForm({ ...form, confirm: e.target.value })}
          error={err('confirm')}
        />
        <div className={errors.agree ? 'field has-error' : 'field'}>
          <label className="checkbox-row">
            <input
              type="checkbox"
              name="agree"
              checked={form.agree}
              onChange={(e) => setForm({ ...form, agree: e.target.checked })}
              aria-invalid={errors.agree ? true : undefined}
            />
            <span>
              {t('agree_prefix')}{' '}
              <a href={paths.terms} target="_blank" rel="noreferrer">
                {t('terms_of_use')}
              </a>{' '}
              {t('and')}{' '}
              <a href={paths.privacy} target="_blank" rel="noreferrer">
                {t('privacy_policy')}
              </a>
            </span>
          </label>
          {errors.agree ? (
            <p className="field-error" role="alert">
              {t(errors.agree)}
            </p>
          ) : null}
        </div>
        {serverError ? (
          <p className="form-error" role="alert">
            {serverError}
          </p>
        ) : null}
        <button type="submit" className="button primary full" disabled={busy}>
          {t('sign_up_action')}
        </button>
      </form>
      <p className="auth-switch">
        {t('have_account')} <Link to={paths.auth.signIn()}>{t('sign_in')}</Link>
      </p>
    </section>
  );
}
