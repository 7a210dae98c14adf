// The one API client: lib/http.ts bound to the session (tokens, docs/product.md §8's 401 handling) and to
// the language setting.
import { createClient } from '../lib/http';
import { navigateTo } from '../lib/navigation';
import { paths, signInFor } from '../lib/paths';
import { useSettings } from '../stores/settings';
import { clearSession, currentSession } from '../stores/session';

/**
 * docs/product.md §8: a 401 clears the session and goes to sign-in. In PC mode (embedded in the desktop
 * client) the host app is told instead and the market is shown.
 */
export function handleUnauthorized() {
  const pcMode = useSettings.getState().isPCMode;
  clearSession();
  if (pcMode) {
    try {
      window.parent?.postMessage({ type: 'zmarket:unauthorized' }, '*');
    } catch {
      // A cross-origin parent that refuses messages: nothing more to do.
    }
    navigateTo(paths.market.home(), { replace: true });
    return;
  }
  // A phone page (under /m/) goes to the phone's sign-in, which brings the person back (issue 41).
  const pathname = typeof window === 'undefined' ? '' : window.location.pathname;
  const here = typeof window === 'undefined' ? '' : pathname + window.location.search;
  // Already on a sign-in page (a second call answered 401 after the first sent the person there:
  // the live stream, a poll): stay, keeping where sign-in returns to.
  const onSignIn = here.startsWith(`${paths.auth.root.pattern}/`) || here.startsWith(`${paths.mobile.root.pattern}${paths.auth.root.pattern}/`);
  if (onSignIn) return;
  navigateTo(signInFor(pathname, here), { replace: true });
}

export const api = createClient({
  language: () => useSettings.getState().language,
  token: (kind) => {
    const session = currentSession();
    return kind === 'refresh' ? session.refresh_token : session.token;
  },
  unauthorized: handleUnauthorized,
  // An operator or company administrator the operator requires two-factor sign-in of, without it:
  // the account page, where it is turned on (docs/identity.md).
  refused: (error) => {
    if (error === 'two_factor_enrolment_required') navigateTo(paths.console.account());
  },
});

/** A file the API answers (a CSV export), fetched with the session's token in the reader's language. */
export async function fetchFile(path: string): Promise<Blob> {
  const response = await fetch(path, {
    headers: { Authorization: `Bearer ${currentSession().token}`, 'Accept-Language': useSettings.getState().language },
  });
  if (!response.ok) throw new Error(String(response.status));
  return response.blob();
}
