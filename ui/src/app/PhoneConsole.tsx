// The phone console's frame (issue 41): the signed-in pages under /m/ (/m/app, /m/app/details,
// /m/wallet, /m/notifications) inside the mobile layout. The same guard as the desktop console
// (no session: the phone's sign-in page, and back; the menu loaded first), and a page is shown only
// when the person's menu grants its desktop twin (a company member's menu has /app only).
import { Outlet, useLocation } from 'react-router';
import { ErrorPage } from '../components/ErrorPage';
import { SkeletonLines } from '../components/placeholders';
import { phoneConsole, trimSlash } from '../lib/paths';
import { useSession } from '../stores/session';
import { Guard } from './Guard';
import { flattenMenu } from './menu';

function Granted() {
  const { pathname } = useLocation();
  const menu = useSession((s) => s.menu);
  const here = trimSlash(pathname);
  const desktop = phoneConsole.find(([phone]) => phone.pattern === here)?.[1].pattern;
  const granted = Boolean(desktop && flattenMenu(menu ?? []).some((e) => (e.path.startsWith('/') ? e.path : `/${e.path}`) === desktop));
  return granted ? <Outlet /> : <ErrorPage code={403} />;
}

/**
 * No live event stream here (the desktop console opens one): a phone's pages load what they show
 * when opened and poll what moves (a rental's meter, the unread count), which keeps a phone's first
 * paint light.
 */
export function PhoneConsole() {
  return (
    <div className="phone-console">
      <Guard
        fallback={
          <div className="console-skeleton">
            <SkeletonLines lines={5} />
          </div>
        }
      >
        <Granted />
      </Guard>
    </div>
  );
}
