import { Link } from 'react-router';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { CompanyHub } from './CompanyHub';
import { SignedInHere } from './SignedInHere';

/** /company-email: the invitations sent to one's email, applications, creating a company. */
export function CompanyEmailPage() {
  const t = useT();
  return (
    <SignedInHere title={t('companies_title')} text={t('sign_in_to_continue')}>
      <section className="auth-card card wide">
        <h1>{t('companies_title')}</h1>
        <p className="muted">{t('companies_intro')}</p>
        <CompanyHub />
        <p className="center-text">
          <Link className="button ghost" to={paths.console.app()}>
            {t('go_to_console')}
          </Link>
        </p>
      </section>
    </SignedInHere>
  );
}
