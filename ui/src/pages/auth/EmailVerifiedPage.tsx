import { Link, useSearchParams } from 'react-router';
import { verifyEmail } from '../../api/iam';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { Icon } from '../../components/Icon';
import { Spinner } from '../../components/placeholders';
import { paths, safeRedirect } from '../../lib/paths';
import { useBoot } from '../../stores/boot';

export function EmailVerifiedPage() {
  const t = useT();
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const redirect = safeRedirect(params.get('redirect'), '');
  // The invitation page signs in in place (also on phones); other pages go through sign-in.
  const toInvitation = redirect.startsWith(paths.companies.join.pattern);
  // A phone signs in on its own sign-in page (/m/auth/signin, issue 41).
  const phone = useBoot().isMobile;
  const next = toInvitation ? redirect : (phone ? paths.mobile.signIn : paths.auth.signIn)(redirect || undefined);
  const state = useAsync(token ? () => verifyEmail(token) : null, [token]);
  // Several sign-ups of the address were pending: none of their passwords is valid, the answer
  // carries a reset token to choose one with.
  const choose = state.data?.password_token;
  return (
    <section className="auth-card card center-text" aria-live="polite">
      {!token ? (
        <>
          <span className="big-icon error">
            <Icon name="error" size={32} />
          </span>
          <h1>{t('email_verify_failed')}</h1>
          <p>{t('missing_token')}</p>
        </>
      ) : state.loading ? (
        <>
          <Spinner label={t('verifying_email')} />
          <h1>{t('verifying_email')}</h1>
        </>
      ) : state.error ? (
        <>
          <span className="big-icon error">
            <Icon name="error" size={32} />
          </span>
          <h1>{t('email_verify_failed')}</h1>
          <p role="alert">{state.error}</p>
        </>
      ) : (
        <>
          <span className="big-icon success">
            <Icon name="success" size={32} />
          </span>
          <h1>{t('email_verified')}</h1>
          <p>{t(choose ? 'email_verified_choose_password' : 'email_verified_text', { email: state.data?.email ?? '' })}</p>
        </>
      )}
      {choose ? (
        <Link className="button primary" to={`${paths.auth.reset.pattern}?token=${encodeURIComponent(choose)}`}>
          {t('choose_password')}
        </Link>
      ) : (
        <Link className="button primary" to={next}>
          {toInvitation ? t('continue_to_invitation') : t('sign_in')}
        </Link>
      )}
    </section>
  );
}
