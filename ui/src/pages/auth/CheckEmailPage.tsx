import { Link, useSearchParams } from 'react-router';
import { useT } from '../../lib/i18n';
import { Icon } from '../../components/Icon';
import { paths } from '../../lib/paths';

export function CheckEmailPage() {
  const t = useT();
  const [params] = useSearchParams();
  const email = params.get('email');
  return (
    <section className="auth-card card center-text">
      <span className="big-icon">
        <Icon name="messages" size={32} />
      </span>
      <h1>{t('check_email')}</h1>
      <p>{email ? t('check_email_text', { email }) : t('check_email_text_generic')}</p>
      <Link className="button primary" to={paths.auth.signIn()}>
        {t('back_to_sign_in')}
      </Link>
    </section>
  );
}
