import { Link } from 'react-router';
import { useT } from '../../app/i18n';
import { Icon } from '../../components/Icon';
import { paths } from '../../paths';

export function CompanyEmailPage() {
  const t = useT();
  return (
    <section className="auth-card card center-text">
      <span className="big-icon">
        <Icon name="company" size={32} />
      </span>
      <h1>{t('company_email')}</h1>
      <p>{t('company_email_text')}</p>
      <Link className="button primary" to={paths.console.app}>
        {t('go_to_console')}
      </Link>
    </section>
  );
}
