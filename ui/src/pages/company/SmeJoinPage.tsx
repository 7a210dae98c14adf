import { Link, useSearchParams } from 'react-router';
import { joinCompany } from '../../api/company';
import { ApiError } from '../../api/client';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { Icon } from '../../components/Icon';
import { Spinner } from '../../components/ui';
import { paths } from '../../paths';

/** The invitation link /iam/v1/sme/join?code=… (behind the guard: sign in first, then come back). */
export function SmeJoinPage() {
  const t = useT();
  const [params] = useSearchParams();
  const code = params.get('code') ?? '';
  const state = useAsync(
    code
      ? () =>
          joinCompany(code).catch((err) => {
            if (err instanceof ApiError && (err.data as { status?: string } | null)?.status === 'expired') {
              return { sme_id: '', status: 'expired' };
            }
            throw err;
          })
      : null,
    [code],
  );
  const expired = state.data?.status === 'expired';
  return (
    <section className="auth-card card center-text" aria-live="polite">
      {!code ? (
        <h1>{t('invitation_invalid')}</h1>
      ) : state.loading ? (
        <>
          <Spinner label={t('joining_company')} />
          <h1>{t('joining_company')}</h1>
        </>
      ) : state.error ? (
        <>
          <span className="big-icon error">
            <Icon name="error" size={32} />
          </span>
          <h1>{t('invitation_invalid')}</h1>
          <p role="alert">{state.error}</p>
        </>
      ) : expired ? (
        <>
          <span className="big-icon error">
            <Icon name="warning" size={32} />
          </span>
          <h1>{t('invitation_expired')}</h1>
        </>
      ) : (
        <>
          <span className="big-icon success">
            <Icon name="success" size={32} />
          </span>
          <h1>{t('joined_company')}</h1>
        </>
      )}
      <Link className="button primary" to={paths.console.app}>
        {t('go_to_console')}
      </Link>
    </section>
  );
}
