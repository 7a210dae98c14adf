import { Link, useSearchParams } from 'react-router';
import { joinCompany } from '../../api/companies';
import { ApiError } from '../../lib/http';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { logout } from '../../api/iam';
import { reloadOrganizations, switchCompany } from '../../api/sessionActions';
import { Icon } from '../../components/Icon';
import { Spinner } from '../../components/placeholders';
import { paths } from '../../lib/paths';
import { toastFailure, withLoading } from '../../stores/feedback';
import { clearSession, useSession } from '../../stores/session';
import { SignedInHere } from './SignedInHere';

type Outcome = { sme_id: string; status: 'accepted' | 'expired' | 'declined' };

function Join({ code }: { code: string }) {
  const t = useT();
  const orgs = useSession((s) => s.organizationList);
  const state = useAsync<Outcome>(
    () =>
      joinCompany(code)
        .then(async (r) => {
          await reloadOrganizations().catch(() => undefined);
          return { sme_id: r.sme_id, status: 'accepted' as const };
        })
        .catch((err) => {
          const status = err instanceof ApiError ? (err.data as { status?: string } | null)?.status : undefined;
          if (status === 'expired' || status === 'declined') return { sme_id: '', status };
          throw err;
        }),
    [code],
  );
  const company = orgs.find((o) => o.id === state.data?.sme_id);
  const forbidden = state.error !== null;
  return (
    <section className="auth-card card center-text" aria-live="polite">
      {state.loading ? (
        <>
          <Spinner label={t('joining_company')} />
          <h1>{t('joining_company')}</h1>
        </>
      ) : forbidden ? (
        <>
          <span className="big-icon error">
            <Icon name="error" size={32} />
          </span>
          <h1>{t('invitation_invalid')}</h1>
          <p role="alert">{state.error}</p>
          <button type="button" className="button ghost" onClick={() => void logout().catch(() => undefined).then(clearSession)}>
            {t('sign_out_use_other')}
          </button>
        </>
      ) : state.data?.status === 'expired' || state.data?.status === 'declined' ? (
        <>
          <span className="big-icon error">
            <Icon name="warning" size={32} />
          </span>
          <h1>{state.data.status === 'expired' ? t('invitation_expired') : t('invitation_declined_text')}</h1>
        </>
      ) : (
        <>
          <span className="big-icon success">
            <Icon name="success" size={32} />
          </span>
          <h1>{t('joined_company')}</h1>
          {company ? <p>{company.name}</p> : null}
          {state.data?.sme_id ? (
            <button
              type="button"
              className="button primary"
              onClick={() => void toastFailure(() => withLoading(() => switchCompany(state.data!.sme_id)))}
            >
              {t('switch_to_company', { name: company?.name ?? '' })}
            </button>
          ) : null}
        </>
      )}
      <Link className="button ghost" to={paths.console.app()}>
        {t('go_to_console')}
      </Link>
    </section>
  );
}

/** The invitation link /iam/v1/sme/join?code=…: signs in in place when needed, then joins. */
export function CompanyJoinPage() {
  const t = useT();
  const [params] = useSearchParams();
  const code = params.get('code') ?? '';
  if (!code) {
    return (
      <section className="auth-card card center-text">
        <h1>{t('invitation_invalid')}</h1>
        <Link className="button primary" to={paths.console.app()}>
          {t('go_to_console')}
        </Link>
      </section>
    );
  }
  return (
    <SignedInHere title={t('join_company')} text={t('sign_in_to_join')}>
      <Join code={code} />
    </SignedInHere>
  );
}
