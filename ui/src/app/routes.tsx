// The route table of SPEC.md §2: public, mobile, and the signed-in routes built from the menu.
import { useEffect } from 'react';
import { matchRoutes, useNavigate, type RouteObject } from 'react-router';
import type { MenuEntry } from '../api/types';
import { translate, type Lang, type MessageKey } from '../i18n';
import { CenteredLayout, ConsoleLayout, FrontLayout, MobileLayout } from './layouts';
import { consolePages, consoleTitleKey, pageForEntry } from './consolePages';
import { flattenMenu, trimSlash } from './menu';
import { paths } from '../lib/paths';
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
import { CompanyEmailPage } from '../pages/companies/CompanyEmailPage';
import { SmeJoinPage } from '../pages/companies/SmeJoinPage';
import { DownloadPage } from '../pages/download/DownloadPage';
import { ErrorPage } from '../components/ErrorPage';
import { PcWebPage } from '../pages/pcweb/PcWebPage';

export interface RouteHandle {
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

const route = (path: string, titleKey: MessageKey, element: React.ReactNode): RouteObject => ({
  path,
  element,
  handle: { titleKey } satisfies RouteHandle,
});

function consoleRoutes(menu: MenuEntry[] | null): RouteObject[] {
  if (!menu) {
    // Before the menu is known (server, first client render) every known path renders the shell.
    return consolePages.map((p) => route(p.path, p.titleKey, <p.page />));
  }
  const entries = flattenMenu(menu);
  const seen = new Set<string>();
  const out: RouteObject[] = [];
  for (const e of entries) {
    const path = e.path.startsWith('/') ? e.path : `/${e.path}`;
    if (seen.has(path)) continue;
    seen.add(path);
    const Page = pageForEntry(e.component, path);
    const titleKey = consoleTitleKey(path);
    out.push({ path, element: <Page />, handle: titleKey ? { titleKey } : { title: e.meta?.title || e.name } });
  }
  // Known pages the menu does not grant: no access.
  for (const p of consolePages) {
    if (!seen.has(p.path)) out.push(route(p.path, 'forbidden', <ErrorPage code={403} />));
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
    route('/', 'explore_market', <Redirect to={paths.market.home} />),
    route('/auth', 'sign_in', <Redirect to="/auth/signin" />),
    route('/m', 'explore_market', <Redirect to={paths.mobile.market} />),
    {
      element: <FrontLayout />,
      children: [
        route('/market', 'explore_market', <MarketPage />),
        route('/market/more', 'market_more', <MarketMorePage />),
        route('/market/details', 'market_details', <MarketDetailsPage />),
        route('/nearby', 'nearby', <NearbyPage />),
        route('/nearby/details', 'nearby_details', <NearbyDetailsPage />),
        route('/on-demand', 'on_demand', <OnDemandPage />),
        route('/on-demand/place-an-order', 'place_an_order', <PlaceOrderPage />),
        route('/m/download', 'download', <DownloadPage />),
      ],
    },
    route('/nearby/map', 'nearby_map', <NearbyMapPage />),
    {
      element: <MobileLayout />,
      children: [
        route('/m/market', 'explore_market', <MarketPage />),
        route('/m/market/more', 'market_more', <MarketMorePage />),
        route('/m/market/details', 'market_details', <MarketDetailsPage />),
        route('/m/nearby', 'nearby', <NearbyPage />),
        route('/m/nearby/details', 'nearby_details', <NearbyDetailsPage />),
      ],
    },
    {
      element: <CenteredLayout />,
      children: [
        route('/auth/signin', 'sign_in', <SignInPage />),
        route('/auth/signup', 'sign_up', <SignUpPage />),
        route('/check-email', 'check_email', <CheckEmailPage />),
        route('/email-verified', 'email_verified', <EmailVerifiedPage />),
        route('/company-email', 'company_email', <CompanyEmailPage />),
        route('/iam/v1/sme/join', 'join_company', <SmeJoinPage />),
        route('/pc-web', 'pc_web', <PcWebPage />),
        route('/403', 'forbidden', <ErrorPage code={403} />),
        route('/404', 'not_found', <ErrorPage code={404} />),
        route('/500', 'server_error', <ErrorPage code={500} />),
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
export const NOT_FOUND_HANDLE: RouteHandle = { titleKey: 'not_found', notFound: true };

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
