import { useEffect } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { isLang } from '../../i18n';
import { applySession } from '../../api/sessionActions';
import { safeRedirect } from '../../lib/paths';
import { useT } from '../../lib/i18n';
import { Spinner } from '../../components/placeholders';
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

/** PC-mode entry (SPEC.md §2): stores the session handed over by the desktop client, then redirects. */
export function PcWebPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  useEffect(() => {
    const token = params.get('token');
    const language = params.get('language');
    const pcMode = params.get('isPCMode');
    const settings = useSettings.getState();
    settings.set({ isPCMode: pcMode === 'true' || pcMode === '1' });
    if (isLang(language)) settings.setLanguage(language);
    if (token) {
      const previous = readStoredSession();
      const email = params.get('email') ?? '';
      const session: SessionData = {
        token,
        refresh_token: params.get('refresh_token') ?? '',
        access_token_expire: Number(params.get('access_token_expire') ?? 0) || 0,
        smeId: params.get('smeId') || 'user',
        userType: (params.get('userType') as UserType) || 'user',
        userInfo: { ...previous.userInfo, email: email || previous.userInfo.email },
        organizationList: previous.organizationList as Organization[],
      };
      applySession(session);
    }
    navigate(pcWebTarget(params), { replace: true });
    // Runs once for the entry URL.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <section className="auth-card card center-text">
      <Spinner label={t('loading')} />
      <p>{t('loading')}</p>
    </section>
  );
}

