import { useEffect, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { isLang } from '../../i18n';
import { applySession } from '../../api/sessionActions';
import { fetchProfileOf } from '../../api/iam';
import { safeRedirect } from '../../lib/paths';
import { useT } from '../../lib/i18n';
import { Spinner } from '../../components/placeholders';
import { ConfirmDialog } from '../../components/Dialog';
import { useSettings } from '../../stores/settings';
import { paths } from '../../lib/paths';
import type { Organization, SessionData, UserType } from '../../api/types';
import { readStoredSession } from '../../stores/session';

/** Builds the target of /pc-web: the redirect path with `language` and the JSON `params` appended. */
export function pcWebTarget(query: URLSearchParams): string {
  const redirect = safeRedirect(query.get('redirect'), paths.market.home());
  const extra: Record<string, string> = {};
  const rawParams = query.get('params');
  if (rawParams) {
    try {
      const parsed = JSON.parse(rawParams) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
          if (v !== null && v !== undefined) extra[k] = typeof v === 'string' ? v : JSON.stringify(v);
        }
      }
    } catch {
      // Malformed params are ignored; the redirect still happens.
    }
  }
  const language = query.get('language');
  if (isLang(language)) extra.language = language;
  const [path, existing] = redirect.split('?');
  const merged = new URLSearchParams(existing ?? '');
  for (const [k, v] of Object.entries(extra)) merged.set(k, v);
  const qs = merged.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The session the desktop client hands over in the entry URL, if any. */
function handedOver(query: URLSearchParams): SessionData | null {
  const token = query.get('token');
  if (!token) return null;
  const previous = readStoredSession();
  const email = query.get('email') ?? '';
  return {
    token,
    refresh_token: query.get('refresh_token') ?? '',
    access_token_expire: Number(query.get('access_token_expire') ?? 0) || 0,
    smeId: query.get('smeId') || 'user',
    userType: (query.get('userType') as UserType) || 'user',
    userInfo: { ...previous.userInfo, email: email || previous.userInfo.email },
    organizationList: previous.organizationList as Organization[],
  };
}

/** What /pc-web asks before it stores a session from a link. */
interface Question {
  session: SessionData;
  /** The account signed in in this browser now; null when nobody is. */
  current: string | null;
  /** The account the link's token belongs to, as the server says (never the link's `email`). */
  incoming: string;
}

/**
 * PC-mode entry (docs/product.md §2): stores the session handed over by the desktop client, then
 * redirects. The tokens leave the address bar and the history at once. Before a session from the
 * link is stored, the server is asked whose it is, and the person is asked: when nobody is signed
 * in, whether to sign in as that account; when another account is, whether to replace it. A link
 * must not sign someone into another person's account unnoticed (login CSRF, issue 29 finding 9),
 * and the link's own `email` parameter, which anyone can write, is never what is shown.
 */
export function PcWebPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  // Read once: the address bar no longer holds them after the first effect.
  const [entry] = useState(() => new URLSearchParams(params));
  const [question, setQuestion] = useState<Question | null>(null);
  const finish = (session: SessionData | null) => {
    if (session) applySession(session);
    navigate(pcWebTarget(entry), { replace: true });
  };
  useEffect(() => {
    window.history.replaceState(window.history.state, '', window.location.pathname);
    const language = entry.get('language');
    const pcMode = entry.get('isPCMode');
    const settings = useSettings.getState();
    settings.set({ isPCMode: pcMode === 'true' || pcMode === '1' });
    if (isLang(language)) settings.setLanguage(language);
    const session = handedOver(entry);
    const current = readStoredSession();
    if (!session || current.token === session.token) return finish(session);
    let live = true;
    fetchProfileOf(session.token)
      .then((profile) => {
        if (!live) return;
        const incoming = { ...session, userInfo: { ...session.userInfo, email: profile.email } };
        // The same person with fresh tokens (the desktop client signed in again): nothing to ask.
        if (current.token && current.userInfo.email === profile.email) return finish(incoming);
        setQuestion({ session: incoming, current: current.token ? current.userInfo.email || t('pc_web_other_account') : null, incoming: profile.email });
      })
      // A token the server does not know stores nothing.
      .catch(() => live && finish(null));
    return () => {
      live = false;
    };
    // Runs once for the entry URL.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const signIn = question?.current === null;
  return (
    <section className="auth-card card center-text">
      <Spinner label={t('loading')} />
      <p>{t('loading')}</p>
      <ConfirmDialog
        open={question !== null}
        title={t(signIn ? 'pc_web_sign_in_title' : 'pc_web_switch_title')}
        text={
          signIn
            ? t('pc_web_sign_in_text', { incoming: question?.incoming ?? '' })
            : t('pc_web_switch_text', { current: question?.current ?? '', incoming: question?.incoming ?? '' })
        }
        confirmLabel={t(signIn ? 'pc_web_sign_in_confirm' : 'pc_web_switch_replace')}
        onConfirm={() => finish(question?.session ?? null)}
        onClose={() => finish(null)}
      />
    </section>
  );
}
