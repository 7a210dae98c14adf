import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { answerInvitation, fetchInvitation } from '../../api/companies';
import type { JoinInvitation } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useAction } from '../../lib/useAction';
import { useT } from '../../lib/i18n';
import { logout } from '../../api/iam';
import { reloadOrganizations, switchCompany } from '../../api/sessionActions';
import { Icon } from '../../components/Icon';
import { Spinner } from '../../components/placeholders';
import { paths } from '../../lib/paths';
import { toastFailure, withLoading } from '../../stores/feedback';
import { clearSession } from '../../stores/session';
import { SignedInHere } from './SignedInHere';

/** The invitation as the link shows it, then as it was answered here. */
function Join({ code }: { code: string }) {
  const t = useT();
  const state = useAsync<JoinInvitation>(() => fetchInvitation(code), [code]);
  const [answered, setAnswered] = useState<JoinInvitation['status'] | null>(null);
  const acting = useAction();
  const inv = state.data;
  const status = answered ?? inv?.status;
  const answer = (accept: boolean) =>
    void acting.run(async () => {
      const r = await answerInvitation(code, accept);
      if (r.status === 'accepted') await reloadOrganizations().catch(() => undefined);
      setAnswered(r.status);
    });
  const icon = (name: 'error' | 'warning' | 'success', tone: string) => (
    <span className={`big-icon ${tone}`}>
      <Icon name={name} size={32} />
    </span>
  );
  return (
    <section className="auth-card card center-text" aria-live="polite">
      {state.loading ? (
        <Spinner label={t('loading')} />
      ) : state.error !== null || !inv ? (
        <>
          {icon('error', 'error')}
          <h1>{t('invitation_invalid')}</h1>
          <p role="alert">{state.error}</p>
          <button type="button" className="button ghost" onClick={() => void logout().catch(() => undefined).then(clearSession)}>
            {t('sign_out_use_other')}
          </button>
        </>
      ) : status === 'invited' ? (
        <>
          <h1>{t('join_company')}</h1>
          <p data-testid="invitation">
            {t('invitation_from', { inviter: inv.invited_by || '—', company: inv.company, role: t(inv.role === 'admin' ? 'role_admin' : 'role_member') })}
          </p>
          {acting.error ? <p role="alert" className="form-error">{acting.error}</p> : null}
          <div className="row-actions">
            <button type="button" className="button primary" disabled={acting.busy} onClick={() => answer(true)}>
              {t('invitation_accept')}
            </button>
            <button type="button" className="button ghost" disabled={acting.busy} onClick={() => answer(false)}>
              {t('decline')}
            </button>
          </div>
        </>
      ) : status === 'accepted' ? (
        <>
          {icon('success', 'success')}
          <h1>{t('joined_company')}</h1>
          <p>{inv.company}</p>
          <button type="button" className="button primary" onClick={() => void toastFailure(() => withLoading(() => switchCompany(inv.sme_id)))}>
            {t('switch_to_company', { name: inv.company })}
          </button>
        </>
      ) : (
        <>
          {icon('warning', 'error')}
          <h1>{status === 'declined' ? t('invitation_declined_text') : t('invitation_expired')}</h1>
          <p>{inv.company}</p>
        </>
      )}
      <Link className="button ghost" to={paths.console.app()}>
        {t('go_to_console')}
      </Link>
    </section>
  );
}

/** The invitation link /iam/v1/sme/join?code=…: signs in in place when needed, shows the company and
 * who invited, and joins only on Accept (issue 44 item 2). */
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
