import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { forgotPassword } from '../../api/iam';
import { Field } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Icon } from '../../components/Icon';
import { useT } from '../../lib/i18n';
import { usePublicPaths } from '../../lib/paths';
import { validateEmail } from '../../lib/validation';

/** "Forgot password": mails a reset link; says the same whether or not the address has an account. */
export function ForgotPasswordPage() {
  const t = useT();
  const p = usePublicPaths();
  const [params] = useSearchParams();
  const [email, setEmail] = useState(params.get('email') ?? '');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const form = useForm<'email'>({
    validate: () => ({ email: validateEmail(email) }),
    action: async () => {
      const res = await forgotPassword(email.trim());
      setSentTo(res.email);
    },
    serverErrorField: 'email',
  });
  if (sentTo) {
    return (
      <section className="auth-card card center-text" aria-live="polite">
        <span className="big-icon">
          <Icon name="messages" size={32} />
        </span>
        <h1>{t('forgot_password_sent_title')}</h1>
        <p>{t('forgot_password_sent', { email: sentTo })}</p>
        <Link className="button primary" to={p.signIn()}>
          {t('back_to_sign_in')}
        </Link>
      </section>
    );
  }
  return (
    <section className="auth-card card">
      <h1>{t('forgot_password')}</h1>
      <p className="muted">{t('forgot_password_intro')}</p>
      <form onSubmit={form.submit} noValidate>
        <Field label={t('email')} type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} error={form.error('email')} />
        <FormError form={form} />
        <SubmitButton form={form} className="button primary full">
          {t('send_reset_link')}
        </SubmitButton>
      </form>
      <p className="auth-switch">
        <Link to={p.signIn()}>{t('back_to_sign_in')}</Link>
      </p>
    </section>
  );
}
