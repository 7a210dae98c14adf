import { Link, useNavigate, useSearchParams } from 'react-router';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { safeRedirect } from '../../lib/paths';
import { SignInForm } from '../../components/auth/SignInForm';
import { paths } from '../../lib/paths';

export function SignInPage() {
  const t = useT();
  const boot = useBoot();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  return (
    <section className="auth-card card">
      <h1>{t('sign_in_title', { product: boot.productName })}</h1>
      <SignInForm onSignedIn={() => navigate(safeRedirect(params.get('redirect'), paths.console.app()), { replace: true })} />
      <p className="auth-links">
        <Link to={paths.auth.forgot()}>{t('forgot_password_link')}</Link>
        <Link to={paths.checkEmail(undefined, params.get('redirect') ?? undefined)}>{t('resend_verification_link')}</Link>
      </p>
      <p className="auth-switch">
        {t('no_account')} <Link to={paths.auth.signUp(params.get('redirect') ?? undefined)}>{t('sign_up')}</Link>
      </p>
    </section>
  );
}
