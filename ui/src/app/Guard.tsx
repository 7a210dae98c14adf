import { useEffect, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { useSession } from '../stores/session';
import { paths } from '../lib/paths';
import { loadMenu } from '../api/sessionActions';

/**
 * SPEC.md §2 guard. Not signed in: to /auth/signin. Signed in without a menu: load it, then
 * navigate again. Until the session is read (always on the server and in the first client render)
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
      navigate(paths.auth.signIn(location.pathname + location.search), { replace: true });
      return;
    }
    if (menuStatus === 'idle') {
      const here = location.pathname + location.search + location.hash;
      void loadMenu().then((ok) => {
        if (ok) navigate(here, { replace: true });
      });
    }
  }, [loaded, token, menuStatus, location.pathname, location.search, location.hash, navigate]);

  if (!loaded || !token || menuStatus !== 'loaded') return <>{fallback}</>;
  return <>{children}</>;
}
