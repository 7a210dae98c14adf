// Pages a phone opens straight from a mail (docs/product.md §2 keeps them out of the phone redirect, the
// sign-in page is not): signed out, they sign in in place instead of leaving for /auth/signin.
import type { ReactNode } from 'react';
import { Link, useLocation } from 'react-router';
import { useT } from '../../lib/i18n';
import { SignInForm } from '../../components/auth/SignInForm';
import { SkeletonLines } from '../../components/placeholders';
import { paths } from '../../lib/paths';
import { useSession } from '../../stores/session';

export function SignedInHere({ title, text, children }: { title: string; text: string; children: ReactNode }) {
  const t = useT();
  const loaded = useSession((s) => s.loaded);
  const token = useSession((s) => s.token);
  const location = useLocation();
  // Signing up from here comes back here (the invitation) after the email is verified.
  const here = location.pathname + location.search;
  if (!loaded) {
    return (
      <section className="auth-card card">
        <SkeletonLines lines={4} />
      </section>
    );
  }
  if (!token) {
    return (
      <section className="auth-card card">
        <h1>{title}</h1>
        <p className="muted">{text}</p>
        <SignInForm onSignedIn={() => undefined} />
        <p className="auth-links">
          <Link to={paths.auth.forgot()}>{t('forgot_password_link')}</Link>
        </p>
        <p className="auth-switch">
          {t('no_account')} <Link to={paths.auth.signUp(here)}>{t('sign_up')}</Link>
        </p>
      </section>
    );
  }
  return <>{children}</>;
}
