// The route table of docs/product.md §2: public, mobile, and the signed-in routes built from the menu.
// Paths, titles and href builders are named once in lib/paths.ts; this table gives each its page.
import { lazy, useEffect, type ComponentType, type LazyExoticComponent, type ReactNode } from 'react';
import { matchRoutes, useNavigate, type RouteObject } from 'react-router';
import type { MenuEntry } from '../api/types';
import { translate, type Lang, type MessageKey } from '../i18n';
import { componentName, consolePages, consoleTitleKey, paths, phoneConsole, trimSlash, type PagePath } from '../lib/paths';
import { CenteredLayout, ConsoleLayout, FrontLayout, MobileLayout } from './layouts';
import { PhoneConsole } from './PhoneConsole';
import { flattenMenu } from './menu';
import { MarketPage } from '../pages/market/MarketPage';
import { MarketMorePage } from '../pages/market/MarketMorePage';
import { MarketDetailsPage } from '../pages/market/MarketDetailsPage';
import { NearbyPage } from '../pages/nearby/NearbyPage';
import { NearbyDetailsPage } from '../pages/nearby/NearbyDetailsPage';
import { NearbyMapPage } from '../pages/nearby/NearbyMapPage';
import { OnDemandPage } from '../pages/ondemand/OnDemandPage';
import { PlaceOrderPage } from '../pages/ondemand/PlaceOrderPage';
import { SignInPage } from '../pages/auth/SignInPage';
import { SignUpPage } from '../pages/auth/SignUpPage';
import { CheckEmailPage } from '../pages/auth/CheckEmailPage';
import { EmailVerifiedPage } from '../pages/auth/EmailVerifiedPage';
import { ForgotPasswordPage } from '../pages/auth/ForgotPasswordPage';
import { ResetPasswordPage } from '../pages/auth/ResetPasswordPage';
import { CompanyEmailPage } from '../pages/companies/CompanyEmailPage';
import { CompanyJoinPage } from '../pages/companies/CompanyJoinPage';
import { DownloadPage } from '../pages/download/DownloadPage';
import { DocumentPage } from '../pages/documents/DocumentPage';
import { ErrorPage } from '../components/ErrorPage';
import { PcWebPage } from '../pages/pcweb/PcWebPage';

interface RouteHandle {
  titleKey?: MessageKey;
  /** A literal title (menu entries the UI does not know). */
  title?: string;
  notFound?: boolean;
}

/** Client-side redirect; the server answers these paths with a 302 before rendering. */
function Redirect({ to }: { to: string }) {
  const navigate = useNavigate();
  useEffect(() => {
    navigate(to + window.location.search, { replace: true });
  }, [navigate, to]);
  return null;
}

const route = (page: PagePath<any>, element: ReactNode): RouteObject => ({
  path: page.pattern,
  element,
  handle: { titleKey: page.titleKey } satisfies RouteHandle,
});

type LazyPage = LazyExoticComponent<ComponentType>;

const placeholder = lazy(() => import('../pages/console/AreaPage'));

/** The page each console path shows; paths the UI has no page for yet show the generic area page. */
const consolePageOf = new Map<string, LazyPage>([
  [paths.console.app.pattern, lazy(() => import('../pages/apps/AppsPage'))],
  [paths.console.appDetails.pattern, lazy(() => import('../pages/apps/AppDetailsPage'))],
  [paths.console.aiCompute.pattern, lazy(() => import('../pages/apps/AiComputePage'))],
  [paths.console.devices.pattern, lazy(() => import('../pages/devices/DevicesPage'))],
  [paths.console.link.pattern, lazy(() => import('../pages/devices/DeviceLinkPage'))],
  [paths.console.deviceDetails.pattern, lazy(() => import('../pages/devices/DeviceDetailsPage'))],
  [paths.console.zcloudCreate.pattern, lazy(() => import('../pages/devices/ZcloudCreatePage'))],
  [paths.console.company.pattern, lazy(() => import('../pages/companies/CompanyPage'))],
  [paths.console.allocate.pattern, lazy(() => import('../pages/companies/AllocatePage'))],
  [paths.console.companyHistory.pattern, lazy(() => import('../pages/companies/CompanyHistoryPage'))],
  [paths.console.history.pattern, lazy(() => import('../pages/companies/MyHistoryPage'))],
  [paths.console.demands.pattern, lazy(() => import('../pages/ondemand/DemandsAndOffersPage'))],
  [paths.console.wallet.pattern, lazy(() => import('../pages/wallet/WalletPage'))],
  [paths.console.topUp.pattern, lazy(() => import('../pages/wallet/TopUpPage'))],
  [paths.console.account.pattern, lazy(() => import('../pages/account/AccountPage'))],
  [paths.console.username.pattern, lazy(() => import('../pages/account/UsernamePage'))],
  [paths.console.password.pattern, lazy(() => import('../pages/account/PasswordPage'))],
  [paths.console.friends.pattern, lazy(() => import('../pages/social/FriendsPage'))],
  [paths.console.tags.pattern, lazy(() => import('../pages/social/TagsPage'))],
  [paths.console.messages.pattern, lazy(() => import('../pages/social/MessagesPage'))],
  [paths.console.operator.pattern, lazy(() => import('../pages/operator/OperatorPage'))],
  [paths.console.operatorPeople.pattern, lazy(() => import('../pages/operator/PeoplePage'))],
  [paths.console.operatorAudit.pattern, lazy(() => import('../pages/operator/AuditPage'))],
  [paths.console.operatorApps.pattern, lazy(() => import('../pages/operator/AppsPage'))],
  [paths.console.operatorSettings.pattern, lazy(() => import('../pages/operator/SettingsPage'))],
  [paths.console.operatorCodes.pattern, lazy(() => import('../pages/operator/CodesPage'))],
]);

/**
 * The phone console's pages (issue 41): the desktop pages themselves in the phone layout (they
 * link inside /m/ there: lib/paths.ts usePublicPaths), notifications aside (the desktop shows them
 * as a tab of /messages, which a phone does not have).
 */
const phonePageOf = new Map<string, LazyPage>([
  [paths.mobile.app.pattern, consolePageOf.get(paths.console.app.pattern)!],
  [paths.mobile.appDetails.pattern, consolePageOf.get(paths.console.appDetails.pattern)!],
  [paths.mobile.wallet.pattern, consolePageOf.get(paths.console.wallet.pattern)!],
  [paths.mobile.notifications.pattern, lazy(() => import('../pages/social/PhoneNotificationsPage'))],
]);

function phoneConsoleRoutes(): RouteObject[] {
  return phoneConsole.map(([phone]) => {
    const Page = phonePageOf.get(phone.pattern) ?? placeholder;
    return route(phone, <Page />);
  });
}

const pageByComponent = new Map(consolePages.map((p) => [componentName(p), consolePageOf.get(p.pattern) ?? placeholder]));

/** The page of a menu entry, by its `component` name; an unknown name gets the generic area page. */
function pageForEntry(component: string | undefined): LazyPage {
  return pageByComponent.get(component ?? '') ?? placeholder;
}

function consoleRoutes(menu: MenuEntry[] | null): RouteObject[] {
  if (!menu) {
    // Before the menu is known (server, first client render) every known path renders the shell.
    return consolePages.map((p) => {
      const Page = consolePageOf.get(p.pattern) ?? placeholder;
      return route(p, <Page />);
    });
  }
  const entries = flattenMenu(menu);
  const seen = new Set<string>();
  const out: RouteObject[] = [];
  for (const e of entries) {
    const path = e.path.startsWith('/') ? e.path : `/${e.path}`;
    if (seen.has(path)) continue;
    seen.add(path);
    const Page = pageForEntry(e.component);
    const titleKey = consoleTitleKey(path);
    out.push({ path, element: <Page />, handle: titleKey ? { titleKey } : { title: e.meta?.title || e.name } });
  }
  // Known pages the menu does not grant: no access.
  for (const p of consolePages) {
    if (!seen.has(p.pattern)) out.push({ path: p.pattern, element: <ErrorPage code={403} />, handle: { titleKey: 'forbidden' } });
  }
  return out;
}

let staticRoutes: RouteObject[] | null = null;
let lastMenu: MenuEntry[] | null = null;
let lastMenuRoutes: RouteObject[] | null = null;

/** The route table for a menu; cached (the server renders the menu-less table on every request). */
export function buildRoutes(menu: MenuEntry[] | null): RouteObject[] {
  if (!menu) return (staticRoutes ??= createRoutes(null));
  if (menu !== lastMenu || !lastMenuRoutes) {
    lastMenu = menu;
    lastMenuRoutes = createRoutes(menu);
  }
  return lastMenuRoutes;
}

function createRoutes(menu: MenuEntry[] | null): RouteObject[] {
  return [
    route(paths.root, <Redirect to={paths.market.home()} />),
    route(paths.auth.root, <Redirect to={paths.auth.signIn()} />),
    route(paths.mobile.root, <Redirect to={paths.mobile.market()} />),
    {
      element: <FrontLayout />,
      children: [
        route(paths.market.home, <MarketPage />),
        route(paths.market.more, <MarketMorePage />),
        route(paths.market.details, <MarketDetailsPage />),
        route(paths.nearby.home, <NearbyPage />),
        route(paths.nearby.details, <NearbyDetailsPage />),
        route(paths.onDemand.home, <OnDemandPage />),
        route(paths.onDemand.placeOrder, <PlaceOrderPage />),
        route(paths.documents.terms, <DocumentPage name="terms-of-use" />),
        route(paths.documents.privacy, <DocumentPage name="privacy-policy" />),
        route(paths.documents.guide, <DocumentPage name="guide" />),
      ],
    },
    route(paths.nearby.map, <NearbyMapPage />),
    {
      element: <MobileLayout />,
      children: [
        route(paths.mobile.market, <MarketPage />),
        route(paths.mobile.more, <MarketMorePage />),
        route(paths.mobile.details, <MarketDetailsPage />),
        route(paths.mobile.nearby, <NearbyPage />),
        route(paths.mobile.nearbyDetails, <NearbyDetailsPage />),
        route(paths.download, <DownloadPage />),
        route(paths.mobile.guide, <DocumentPage name="guide" />),
        route(paths.mobile.terms, <DocumentPage name="terms-of-use" />),
        route(paths.mobile.privacy, <DocumentPage name="privacy-policy" />),
        route(paths.mobile.signIn, <SignInPage />),
        route(paths.mobile.signUp, <SignUpPage />),
        route(paths.mobile.forgot, <ForgotPasswordPage />),
        { element: <PhoneConsole />, children: phoneConsoleRoutes() },
      ],
    },
    {
      element: <CenteredLayout />,
      children: [
        route(paths.auth.signIn, <SignInPage />),
        route(paths.auth.signUp, <SignUpPage />),
        route(paths.checkEmail, <CheckEmailPage />),
        route(paths.emailVerified, <EmailVerifiedPage />),
        route(paths.auth.forgot, <ForgotPasswordPage />),
        route(paths.auth.reset, <ResetPasswordPage />),
        route(paths.companies.email, <CompanyEmailPage />),
        route(paths.companies.join, <CompanyJoinPage />),
        route(paths.pcWeb, <PcWebPage />),
        route(paths.errors.forbidden, <ErrorPage code={403} />),
        route(paths.errors.notFound, <ErrorPage code={404} />),
        route(paths.errors.offline, <ErrorPage code={500} />),
      ],
    },
    { element: <ConsoleLayout />, children: consoleRoutes(menu) },
    {
      path: '*',
      element: (
        <CenteredLayout>
          <ErrorPage code={404} />
        </CenteredLayout>
      ),
      handle: NOT_FOUND_HANDLE,
    },
  ];
}

/**
 * The branch of `routes` a path takes (its matched routes, each parent with only the matched child)
 * as a table of its own, remembered per table and path. `useRoutes` flattens and ranks the whole
 * table on every render: on the server (QuickJS) that was a sixth of rendering /market
 * (docs/performance.md). Matching the branch alone gives the same matches: the winner of the whole
 * table is in it, and the layouts above it have no path (no branch of their own).
 */
const branches = new WeakMap<RouteObject[], Map<string, RouteObject[]>>();

export function matchedBranch(routes: RouteObject[], pathname: string): RouteObject[] {
  let byPath = branches.get(routes);
  if (!byPath) branches.set(routes, (byPath = new Map()));
  let branch = byPath.get(pathname);
  if (!branch) {
    const chain = (matchRoutes(routes, { pathname }) ?? []).map((m) => m.route);
    let node: RouteObject | null = null;
    for (let i = chain.length - 1; i >= 0; i--) node = node ? ({ ...chain[i], children: [node] } as RouteObject) : chain[i];
    branch = node ? [node] : [];
    if (byPath.size >= HANDLE_CACHE_MAX) byPath.clear();
    byPath.set(pathname, branch);
  }
  return branch;
}

/** The deepest matched route's handle, for titles and the 404 status. */
const handleCache = new Map<string, RouteHandle>();
const HANDLE_CACHE_MAX = 512;

export function resolveRoute(pathname: string, menu: MenuEntry[] | null = null): RouteHandle {
  // Without a menu the table is static: remember answers (route matching is the costliest part of a
  // server render in QuickJS).
  if (!menu) {
    const hit = handleCache.get(pathname);
    if (hit) return hit;
    const handle = matchHandle(pathname, null);
    if (handleCache.size >= HANDLE_CACHE_MAX) handleCache.clear();
    handleCache.set(pathname, handle);
    return handle;
  }
  return matchHandle(pathname, menu);
}

/** The handle of the 404 page: unknown paths, and known pages whose subject does not exist. */
const NOT_FOUND_HANDLE: RouteHandle = { titleKey: 'not_found', notFound: true };

/**
 * The handle a location shows: its route's, or the 404 page's when the server said the subject of
 * the first location does not exist (`data.notFound`). Server and client title pages through this.
 */
export function pageHandle(pathname: string, menu: MenuEntry[] | null, subjectNotFound: boolean): RouteHandle {
  return subjectNotFound ? NOT_FOUND_HANDLE : resolveRoute(pathname, menu);
}

function matchHandle(pathname: string, menu: MenuEntry[] | null): RouteHandle {
  const matches = matchRoutes(buildRoutes(menu), trimSlash(pathname) || '/');
  const handle = matches?.[matches.length - 1]?.route.handle as RouteHandle | undefined;
  return handle ?? NOT_FOUND_HANDLE;
}

export function titleFromHandle(handle: RouteHandle, lang: Lang, productName: string): string {
  const name = handle.titleKey ? translate(lang, handle.titleKey) : handle.title || productName;
  return `${name} - ${productName}`;
}
