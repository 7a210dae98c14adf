import { useEffect, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { useSession } from '../stores/session';
import { signInFor } from '../lib/paths';
import { loadMenu } from '../api/sessionActions';

/**
 * docs/product.md §2 guard. Not signed in: to /auth/signin (a phone page: /m/auth/signin). Signed in without a menu: load it, then
 * navigate again (unless the person has moved on meanwhile). Until the session is read (always on the server and in the first client render)
 * the fallback (a skeleton) is shown, so server markup and hydration agree.
 */
export function Guard({ children, fallback }: { children: ReactNode; fallback: ReactNode }) {
  const location = useLocation();
  const navigate = useNavigate();
  const loaded = useSession((s) => s.loaded);
  const token = useSession((s) => s.token);
  const menuStatus = useSession((s) => s.menuStatus);

  useEffect(() => {
    if (!loaded) return;
    if (!token) {
      navigate(signInFor(location.pathname, location.pathname + location.search), { replace: true });
      return;
    }
    if (menuStatus === 'idle') {
      const here = location.pathname + location.search + location.hash;
      void loadMenu().then((ok) => {
        // Only when the person is still where the load began: a navigation made meanwhile (the
        // header's company switcher works before the menu arrives) must not be undone.
        // (The browser's location, not this guard's: the guard may have been unmounted meanwhile.)
        const now = window.location.pathname + window.location.search + window.location.hash;
        if (ok && now === here) navigate(here, { replace: true });
      });
    }
  }, [loaded, token, menuStatus, location.pathname, location.search, location.hash, navigate]);

  if (!loaded || !token || menuStatus !== 'loaded') return <>{fallback}</>;
  return <>{children}</>;
}
