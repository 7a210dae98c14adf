// Session actions shared by the guard, the header and the identity pages.
import { PERSONAL_SME_ID } from '../constants';
import { errorText } from '../lib/http';
import { navigateTo } from '../lib/navigation';
import { landingAfterSwitch, signInFor } from '../lib/paths';
import { toast } from '../stores/feedback';
import { resetNotifications } from '../stores/notifications';
import { clearSession, saveSession, saveTokens, setMenu, setOrganizations, useSession } from '../stores/session';
import { t } from '../stores/settings';
import { fetchMenus, fetchOrganizations, logout, refreshTokens, switchContext } from './iam';
import type { SessionData } from './types';

let menuRequest: Promise<boolean> | null = null;

/** The page the person is on (its sign-in is the phone's under /m/). */
const here = () => (typeof window === 'undefined' ? '' : window.location.pathname);

/**
 * Loads the menu for the signed-in user. Empty menu: warn, clear the token, go to sign-in.
 * Failure: clear the token, go to sign-in. Resolves true when the menu is ready.
 */
export function loadMenu(): Promise<boolean> {
  if (menuRequest) return menuRequest;
  setMenu(null, 'loading');
  menuRequest = fetchMenus()
    .then((menu) => {
      if (!menu.length) {
        toast('warning', t('no_menu_access'));
        clearSession();
        navigateTo(signInFor(here()), { replace: true });
        return false;
      }
      setMenu(menu, 'loaded');
      return true;
    })
    .catch((err) => {
      toast('error', errorText(err));
      clearSession();
      navigateTo(signInFor(here()), { replace: true });
      return false;
    })
    .finally(() => {
      menuRequest = null;
    });
  return menuRequest;
}

export function applySession(data: SessionData) {
  resetNotifications();
  saveSession(data);
}

export async function signOut() {
  if (useSession.getState().token) {
    try {
      await logout();
    } catch {
      // The local session is cleared either way.
    }
  }
  clearSession();
  resetNotifications();
  toast('success', t('signed_out'));
  navigateTo(signInFor(here()), { replace: true });
}

/**
 * Switches into a company (or back to "user"), loads the new context's menu, then stays on the
 * page when the new menu allows it, else opens the new context's first menu entry: a switch never
 * lands on a page the new context may not open.
 */
export async function switchCompany(smeId: string) {
  const here = typeof window === 'undefined' ? '' : window.location.pathname + window.location.search;
  const data = await switchContext(smeId);
  applySession(data);
  if (!(await loadMenu())) return;
  navigateTo(landingAfterSwitch(here, useSession.getState().menu ?? []), { replace: true });
}

/** Re-reads the organization list after a company was created, joined, left or renamed. */
export async function reloadOrganizations() {
  setOrganizations(await fetchOrganizations());
}

/**
 * Back to the personal context after the current company went away (deleted): the company token
 * no longer works, but a refresh answers a personal one, with which the full session is fetched.
 */
export async function leaveDeletedCompany() {
  const tokens = await refreshTokens();
  saveTokens(tokens.access_token, tokens.refresh_token, tokens.access_token_expire);
  await switchCompany(PERSONAL_SME_ID);
}
