import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { resendVerification } from '../../api/iam';
import { Field } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { useT } from '../../lib/i18n';
import { Icon } from '../../components/Icon';
import { paths, safeRedirect } from '../../lib/paths';
import { useBoot } from '../../stores/boot';
import { validateEmail } from '../../lib/validation';
import { toast } from '../../stores/feedback';

export function CheckEmailPage() {
  const t = useT();
  const [params] = useSearchParams();
  const email = params.get('email');
  const redirect = safeRedirect(params.get('redirect'), '') || undefined;
  const [address, setAddress] = useState(email ?? '');
  const phone = useBoot().isMobile;
  const form = useForm<'email'>({
    validate: () => ({ email: validateEmail(address) }),
    action: async () => {
      const res = await resendVerification(address.trim(), redirect);
      toast('success', t('verification_resent', { email: res.email }));
    },
    serverErrorField: 'email',
  });
  return (
    <section className="auth-card card center-text">
      <span className="big-icon">
        <Icon name="messages" size={32} />
      </span>
      <h1>{t('check_email')}</h1>
      <p>{email ? t('check_email_text', { email }) : t('check_email_text_generic')}</p>
      <form className="resend-form" onSubmit={form.submit} noValidate aria-label={t('resend_verification')}>
        <Field label={t('email')} type="email" name="email" autoComplete="email" value={address} onChange={(e) => setAddress(e.target.value)} error={form.error('email')} />
        <FormError form={form} />
        <SubmitButton form={form} className="button ghost full">
          {t('resend_verification')}
        </SubmitButton>
      </form>
      {/* A phone stays on its own sign-in and password pages (/m/…, issue 41). */}
      <p className="auth-links">
        <Link to={(phone ? paths.mobile.signIn : paths.auth.signIn)(redirect)}>{t('back_to_sign_in')}</Link>
        <Link to={(phone ? paths.mobile.forgot : paths.auth.forgot)(address.trim() || undefined)}>{t('forgot_password_link')}</Link>
      </p>
    </section>
  );
}
