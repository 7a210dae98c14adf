import { useEffect, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { isLang } from '../../i18n';
import { applySession } from '../../api/sessionActions';
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

/**
 * PC-mode entry (SPEC.md §2): stores the session handed over by the desktop client, then
 * redirects. The tokens leave the address bar and the history at once; when another account is
 * signed in in this browser, it asks before replacing it (a link must not sign someone into
 * another person's account unnoticed).
 */
export function PcWebPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  // Read once: the address bar no longer holds them after the first effect.
  const [entry] = useState(() => new URLSearchParams(params));
  const [conflict, setConflict] = useState<{ current: string; incoming: string } | null>(null);
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
    const incoming = entry.get('email') ?? '';
    if (session && current.token && current.token !== session.token && current.userInfo.email !== incoming) {
      setConflict({ current: current.userInfo.email || t('pc_web_other_account'), incoming: incoming || t('pc_web_other_account') });
      return;
    }
    finish(session);
    // Runs once for the entry URL.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <section className="auth-card card center-text">
      <Spinner label={t('loading')} />
      <p>{t('loading')}</p>
      <ConfirmDialog
        open={conflict !== null}
        title={t('pc_web_switch_title')}
        text={t('pc_web_switch_text', conflict ?? { current: '', incoming: '' })}
        confirmLabel={t('pc_web_switch_replace')}
        onConfirm={() => finish(handedOver(entry))}
        onClose={() => finish(null)}
      />
    </section>
  );
}
