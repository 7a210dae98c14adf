import { Link, useNavigate, useSearchParams } from 'react-router';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { onPhone, safeRedirect, usePublicPaths } from '../../lib/paths';
import { SignInForm } from '../../components/auth/SignInForm';
import { paths } from '../../lib/paths';

/** /auth/signin, and the phone's /m/auth/signin (issue 41): there its links and where it goes after stay on the phone pages. */
export function SignInPage() {
  const t = useT();
  const boot = useBoot();
  const p = usePublicPaths();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const redirect = params.get('redirect') ?? undefined;
  const signedIn = () => {
    const to = safeRedirect(redirect, p.app());
    navigate(p.mobile ? onPhone(to) : to, { replace: true });
  };
  return (
    <section className="auth-card card">
      <h1>{t('sign_in_title', { product: boot.productName })}</h1>
      <SignInForm onSignedIn={signedIn} />
      <p className="auth-links">
        <Link to={p.forgot()}>{t('forgot_password_link')}</Link>
        <Link to={paths.checkEmail(undefined, redirect)}>{t('resend_verification_link')}</Link>
      </p>
      <p className="auth-switch">
        {t('no_account')} <Link to={p.signUp(redirect)}>{t('sign_up')}</Link>
      </p>
    </section>
  );
}
