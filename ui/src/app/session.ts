// Session actions shared by the guard, the header and the identity pages.
import { fetchMenus, logout, switchContext } from '../api/iam';
import { errorText } from '../api/client';
import type { SessionData } from '../api/types';
import { clearSession, saveSession, setMenu, useSession } from '../stores/session';
import { resetNotifications } from '../stores/notifications';
import { toast } from '../stores/feedback';
import { paths } from '../paths';
import { navigateTo } from './navigation';
import { normalizeMenu } from './menu';
import { t } from './i18n';

let menuRequest: Promise<boolean> | null = null;

/**
 * Loads the menu for the signed-in user. Empty menu: warn, clear the token, go to sign-in.
 * Failure: clear the token, go to sign-in. Resolves true when the menu is ready.
 */
export function loadMenu(): Promise<boolean> {
  if (menuRequest) return menuRequest;
  setMenu(null, 'loading');
  menuRequest = fetchMenus()
    .then((data) => {
      const menu = normalizeMenu(data);
      if (!menu.length) {
        toast('warning', t('no_menu_access'));
        clearSession();
        navigateTo(paths.auth.signIn(), { replace: true });
        return false;
      }
      setMenu(menu, 'loaded');
      return true;
    })
    .catch((err) => {
      toast('error', errorText(err));
      clearSession();
      navigateTo(paths.auth.signIn(), { replace: true });
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
  navigateTo(paths.auth.signIn(), { replace: true });
}

/** Switches into a company (or back to "user"); the new menu is loaded by the guard. */
export async function switchCompany(smeId: string) {
  const data = await switchContext(smeId);
  applySession(data);
  navigateTo(paths.console.app, { replace: true });
}

/** Only same-site paths are followed after sign-in. */
export function safeRedirect(target: string | null | undefined, fallback: string): string {
  if (!target || !target.startsWith('/') || target.startsWith('//') || target.startsWith('/auth/')) return fallback;
  return target;
}
