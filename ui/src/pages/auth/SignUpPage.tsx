import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { register } from '../../api/iam';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { Field, PasswordField } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { legalTexts, paths, safeRedirect, usePublicPaths } from '../../lib/paths';
import { validateConfirm, validateEmail, validateNewPassword, validateUsername } from '../../lib/validation';

export function SignUpPage() {
  const t = useT();
  const boot = useBoot();
  const p = usePublicPaths();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  // An invitation (or another page) to come back to after verifying: carried through the mail.
  const redirect = safeRedirect(params.get('redirect'), '') || undefined;
  const [form, setForm] = useState({ email: '', username: '', password: '', confirm: '', agree: false });
  const submission = useForm<'email' | 'username' | 'password' | 'confirm' | 'agree'>({
    validate: () => ({
      email: validateEmail(form.email),
      username: validateUsername(form.username, false),
      password: validateNewPassword(form.password),
      confirm: validateConfirm(form.password, form.confirm),
      agree: form.agree ? null : 'agree_required',
    }),
    action: async () => {
      const res = await register({
        email: form.email.trim(),
        password: form.password,
        confirm_password: form.confirm,
        username: form.username.trim() || undefined,
        agree: true,
        redirect,
      });
      navigate(paths.checkEmail(res?.email ?? form.email.trim(), redirect), { replace: true });
    },
    // The server's precise message (a weak password, a taken email) shows under its field.
    serverFields: { email: 'email', username: 'username', password: 'password', confirm_password: 'confirm', agree: 'agree' },
  });
  const err = submission.error;

  return (
    <section className="auth-card card">
      <h1>{t('sign_up_title', { product: boot.productName })}</h1>
      {redirect?.startsWith(paths.companies.join.pattern) ? <p className="muted">{t('sign_up_to_join')}</p> : null}
      <form onSubmit={submission.submit} noValidate>
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
        <div className={err('agree') ? 'field has-error' : 'field'}>
          <label className="checkbox-row">
            <input
              type="checkbox"
              name="agree"
              checked={form.agree}
              onChange={(e) => setForm({ ...form, agree: e.target.checked })}
              aria-invalid={err('agree') ? true : undefined}
            />
            <span>
              {t('agree_prefix')}{' '}
              <a href={legalTexts.terms} target="_blank" rel="noreferrer">
                {t('terms_of_use')}
              </a>{' '}
              {t('and')}{' '}
              <a href={legalTexts.privacy} target="_blank" rel="noreferrer">
                {t('privacy_policy')}
              </a>
            </span>
          </label>
          {err('agree') ? (
            <p className="field-error" role="alert">
              {err('agree')}
            </p>
          ) : null}
        </div>
        <FormError form={submission} />
        <SubmitButton form={submission} className="button primary full">
          {t('sign_up_action')}
        </SubmitButton>
      </form>
      <p className="auth-switch">
        {t('have_account')} <Link to={p.signIn(redirect)}>{t('sign_in')}</Link>
      </p>
    </section>
  );
}
