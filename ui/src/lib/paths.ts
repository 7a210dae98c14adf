// Every page path of docs/product.md §2, named once: its pattern (what the route table in app/routes.tsx
// matches), its title key, and its href builder. Code links with these (`paths.market.details(id)`),
// never with spelled paths.
import { useLocation } from 'react-router';
import type { MessageKey } from '../i18n';
import phoneRules from './phone-rules.json';

type Query = Record<string, string | number | undefined | null>;

/** `path?k=v&…` with the empty, null and undefined values left out. */
function withQuery(path: string, query: Query): string {
  const parts: string[] = [];
  for (const key of Object.keys(query)) {
    const v = query[key];
    if (v !== undefined && v !== null && v !== '') parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

/** A page: call it for its href; `pattern` and `titleKey` describe its route. */
export interface PagePath<A extends unknown[] = []> {
  (...args: A): string;
  readonly pattern: string;
  readonly titleKey: MessageKey;
}

function page(pattern: string, titleKey: MessageKey): PagePath;
function page<A extends unknown[]>(pattern: string, titleKey: MessageKey, href: (pattern: string, ...args: A) => string): PagePath<A>;
function page<A extends unknown[]>(pattern: string, titleKey: MessageKey, href?: (pattern: string, ...args: A) => string) {
  const build = href ? (...args: A) => href(pattern, ...args) : () => pattern;
  return Object.assign(build, { pattern, titleKey });
}

const byId = (p: string, id?: string) => withQuery(p, { id });
type MoreQuery = { category?: string; keyword?: string };
const more = (p: string, q: MoreQuery = {}) => withQuery(p, q);
type MessagesQuery = { with?: string; tab?: 'notifications' };
const byCategory = (p: string, category?: string) => withQuery(p, { category });

export const paths = {
  root: page('/', 'explore_market'),
  market: {
    home: page('/market', 'explore_market', byCategory),
    more: page('/market/more', 'market_more', more),
    details: page('/market/details', 'market_details', (p, id: string) => byId(p, id)),
  },
  nearby: {
    home: page('/nearby', 'nearby'),
    details: page('/nearby/details', 'nearby_details', (p, id: string) => byId(p, id)),
    map: page('/nearby/map', 'nearby_map'),
  },
  onDemand: {
    home: page('/on-demand', 'on_demand'),
    placeOrder: page('/on-demand/place-an-order', 'place_an_order'),
  },
  auth: {
    root: page('/auth', 'sign_in'),
    signIn: page('/auth/signin', 'sign_in', (p, redirect?: string) => withQuery(p, { redirect })),
    signUp: page('/auth/signup', 'sign_up', (p, redirect?: string) => withQuery(p, { redirect })),
    /** "Forgot password": asks for the reset link. */
    forgot: page('/forgot-password', 'forgot_password', (p, email?: string) => withQuery(p, { email })),
    /** The mailed reset link: /reset-password?token=… */
    reset: page('/reset-password', 'reset_password'),
  },
  /** `redirect`: the page (an invitation) the verified person continues to. */
  checkEmail: page('/check-email', 'check_email', (p, email?: string, redirect?: string) => withQuery(p, { email, redirect })),
  emailVerified: page('/email-verified', 'email_verified'),
  companies: {
    /** Invitations, applications and creating a company; opened from mails, also on phones. */
    email: page('/company-email', 'company_email'),
    /** The invitation link of the mails (its path is docs/api.md's). */
    join: page('/iam/v1/sme/join', 'join_company'),
  },
  download: page('/m/download', 'download'),
  /** Written documents (src/ssr/documents.rs): the legal texts and the user guide. */
  documents: {
    terms: page('/terms-of-use', 'terms_of_use'),
    privacy: page('/privacy-policy', 'privacy_policy'),
    guide: page('/guide', 'guide'),
  },
  errors: {
    forbidden: page('/403', 'forbidden'),
    notFound: page('/404', 'not_found'),
    offline: page('/500', 'server_error'),
  },
  pcWeb: page('/pc-web', 'pc_web'),
  mobile: {
    root: page('/m', 'explore_market'),
    market: page('/m/market', 'explore_market', byCategory),
    more: page('/m/market/more', 'market_more', more),
    details: page('/m/market/details', 'market_details', (p, id: string) => byId(p, id)),
    nearby: page('/m/nearby', 'nearby'),
    nearbyDetails: page('/m/nearby/details', 'nearby_details', (p, id: string) => byId(p, id)),
    guide: page('/m/guide', 'guide'),
    terms: page('/m/terms-of-use', 'terms_of_use'),
    privacy: page('/m/privacy-policy', 'privacy_policy'),
    // The phone console (issue 41): the desktop pages' twins, the same pages in the phone layout.
    signIn: page('/m/auth/signin', 'sign_in', (p, redirect?: string) => withQuery(p, { redirect })),
    signUp: page('/m/auth/signup', 'sign_up', (p, redirect?: string) => withQuery(p, { redirect })),
    forgot: page('/m/forgot-password', 'forgot_password', (p, email?: string) => withQuery(p, { email })),
    app: page('/m/app', 'z_app'),
    appDetails: page('/m/app/details', 'app_details', byId),
    wallet: page('/m/wallet', 'wallet'),
    notifications: page('/m/notifications', 'notifications'),
  },
  /** The signed-in pages; the menu (GET /api/iam/v1/menus) says which a user may open. */
  console: {
    app: page('/app', 'z_app'),
    appDetails: page('/app/details', 'app_details', byId),
    aiCompute: page('/app/aicompute', 'ai_compute'),
    devices: page('/devices', 'devices'),
    link: page('/devices/link', 'link_device'),
    deviceDetails: page('/devices/details', 'device_details', byId),
    zcloudCreate: page('/devices/zcloud/create', 'create_zcloud'),
    company: page('/company', 'company'),
    allocate: page('/company/allocate', 'allocate'),
    companyHistory: page('/company/history', 'company_history'),
    friends: page('/friends', 'friends', (p, tag?: string) => withQuery(p, { tag })),
    tags: page('/friends/tags', 'friend_tags'),
    wallet: page('/wallet', 'wallet'),
    topUp: page('/wallet/top-up', 'top_up'),
    account: page('/account', 'account'),
    username: page('/account/username', 'change_username'),
    password: page('/account/password', 'change_password'),
    /** `with`: the open conversation (a user id); `tab=notifications`: the notifications list. */
    messages: page('/messages', 'messages', (p, q: MessagesQuery = {}) => withQuery(p, q)),
    demands: page('/demands-and-offers', 'demands_and_offers'),
    history: page('/history', 'my_company_history'),
    /** The operator's console (`users.operator`; src/iam/menus.rs). */
    operator: page('/operator', 'operator'),
    operatorPeople: page('/operator/people', 'operator_people'),
    operatorAudit: page('/operator/audit', 'operator_audit'),
    operatorApps: page('/operator/apps', 'operator_apps'),
    operatorSettings: page('/operator/settings', 'operator_settings'),
    operatorCodes: page('/operator/codes', 'operator_codes'),
  },
} as const;

/** The legal texts (pages; the operator may replace their text, see src/ssr/documents.rs). */
export const legalTexts = {
  terms: '/terms-of-use',
  privacy: '/privacy-policy',
} as const;

/** The user guide as PDF files, one per language (scripts/guide-pdf.mjs makes them from /guide). */
export const guidePdf = (lang: 'en' | 'zh') => `/assets/documents/zmarket-guide-${lang}.pdf`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyPage = PagePath<any>;

/** The console pages, in menu order. */
export const consolePages: AnyPage[] = Object.values(paths.console);

/**
 * The menu's name for a console page (`component` of GET /api/iam/v1/menus; src/iam/menus.rs uses
 * the same names): its path without the leading slash, e.g. `devices/zcloud/create`.
 */
export function componentName(page: AnyPage): string {
  return page.pattern.slice(1);
}

const consoleTitles = new Map(consolePages.map((p) => [p.pattern, p.titleKey]));

/** The title key of a console path, or null for a path the UI does not know. */
export function consoleTitleKey(path: string): MessageKey | null {
  return consoleTitles.get(path) ?? null;
}

export function trimSlash(pathname: string): string {
  return pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
}

/** Paths that need no sign-in (docs/product.md §2 "Public pages"), besides everything under /m/. */
const GUARD_EXEMPT = new Set(
  [
    paths.pcWeb,
    paths.errors.forbidden,
    paths.errors.notFound,
    paths.errors.offline,
    paths.market.home,
    paths.market.more,
    paths.market.details,
    paths.nearby.home,
    paths.nearby.details,
    paths.nearby.map,
    // Issue 6 lists the on-demand pages as public pages under the front layout (docs/product.md §2
    // "Public pages"); submitting an order still needs a sign-in.
    paths.onDemand.home,
    paths.onDemand.placeOrder,
    paths.auth.signIn,
    paths.auth.signUp,
    paths.checkEmail,
    paths.emailVerified,
    paths.auth.forgot,
    paths.auth.reset,
    paths.documents.terms,
    paths.documents.privacy,
    paths.documents.guide,
  ].map((p: AnyPage) => p.pattern),
);

const isMobilePath = (p: string) => p === paths.mobile.root.pattern || p.startsWith(`${paths.mobile.root.pattern}/`);

/**
 * The phone console (issue 41): signed-in pages under /m/, each with the desktop page whose menu
 * entry grants it (a company member's menu has /app only).
 */
export const phoneConsole: [AnyPage, AnyPage][] = [
  [paths.mobile.app, paths.console.app],
  [paths.mobile.appDetails, paths.console.appDetails],
  [paths.mobile.wallet, paths.console.wallet],
  [paths.mobile.notifications, paths.console.messages],
];
const PHONE_CONSOLE = new Set(phoneConsole.map(([p]) => p.pattern));

export function isGuardExempt(pathname: string): boolean {
  const p = trimSlash(pathname);
  return GUARD_EXEMPT.has(p) || (isMobilePath(p) && !PHONE_CONSOLE.has(p));
}

/**
 * The phone rules of docs/product.md §2, written once in phone-rules.json, which the server's
 * redirect reads too (src/ssr/phone.rs): the user agents of phones (`platforms`), the pages a phone
 * opens from a mail and stays on (`exempt`: the mailed links, the reset link included), and the
 * desktop pages with a phone twin (`twins`, issue 26). Every other page not under /m/ goes to
 * /m/market.
 */
const PHONE_EXEMPT = new Set<string>(phoneRules.exempt);
const PHONE_TWINS = new Map<string, string>(phoneRules.twins.map(([from, to]) => [from, to]));

function isPhoneUserAgent(ua: string | undefined | null): boolean {
  const lower = (ua ?? '').toLowerCase();
  return phoneRules.platforms.some((p) => lower.includes(p));
}

/**
 * Where a phone goes from a page it may not stay on: the page's phone twin with the same query,
 * else the mobile market in the same language.
 */
export function phoneRedirectTarget(pathname: string, search: string, ua: string | undefined | null): string | null {
  if (!isPhoneUserAgent(ua)) return null;
  const p = trimSlash(pathname);
  if (p.startsWith(`${paths.mobile.root.pattern}/`) || PHONE_EXEMPT.has(p)) return null;
  const twin = PHONE_TWINS.get(p);
  if (twin) return twin + search;
  const language = new URLSearchParams(search).get('language');
  return withQuery(paths.mobile.market.pattern, { language: language === 'en' || language === 'zh' ? language : undefined });
}

/**
 * Only same-site paths are followed after sign-in. A backslash (which browsers read as a slash,
 * so `/\\evil` is `//evil`) or a control character (tab, newline: dropped from URLs by browsers)
 * is refused outright.
 */
export function safeRedirect(target: string | null | undefined, fallback: string): string {
  if (!target || !target.startsWith('/') || target.startsWith('//')) return fallback;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(target)) return fallback;
  if (target === paths.auth.root.pattern || target.startsWith(`${paths.auth.root.pattern}/`)) return fallback;
  if (target.startsWith(`${paths.mobile.root.pattern}${paths.auth.root.pattern}/`)) return fallback;
  return target;
}

/** The market's page of app `id` with its Rent dialog open on box `device` (the nearby details' Rent). */
export function rentOnPath(id: string, device: string): string {
  return withQuery(paths.market.details.pattern, { id, do: 'rent', device });
}

/** Whether `pathname` is one of the phone pages (under /m/). */
export function isPhonePath(pathname: string): boolean {
  return pathname.startsWith(`${paths.mobile.root.pattern}/`);
}

/**
 * `target` (a path with its query) as the phone pages link it: a desktop page with a phone twin
 * becomes the twin, query kept; anything else stays as it is (a notification's link, a redirect
 * after sign-in).
 */
export function onPhone(target: string): string {
  const cut = target.search(/[?#]/);
  const [path, rest] = cut < 0 ? [target, ''] : [target.slice(0, cut), target.slice(cut)];
  const twin = PHONE_TWINS.get(trimSlash(path));
  return twin ? twin + rest : target;
}

/** The sign-in page for a person on `pathname`: the phone's own under /m/, else the desktop one. */
export function signInFor(pathname: string, redirect?: string): string {
  return isPhonePath(pathname) ? paths.mobile.signIn(redirect) : paths.auth.signIn(redirect);
}

/** The paths a page links to: on the phone pages (under /m/) their phone twins, so links stay inside /m/. */
export function usePublicPaths() {
  const { pathname } = useLocation();
  const mobile = isPhonePath(pathname);
  return mobile
    ? {
        mobile,
        market: paths.mobile.market,
        more: paths.mobile.more,
        details: paths.mobile.details,
        nearby: paths.mobile.nearby,
        nearbyDetails: paths.mobile.nearbyDetails,
        guide: paths.mobile.guide,
        signIn: paths.mobile.signIn,
        signUp: paths.mobile.signUp,
        forgot: paths.mobile.forgot,
        app: paths.mobile.app,
        appDetails: paths.mobile.appDetails,
        wallet: paths.mobile.wallet,
      }
    : {
        mobile,
        market: paths.market.home,
        more: paths.market.more,
        details: paths.market.details,
        nearby: paths.nearby.home,
        nearbyDetails: paths.nearby.details,
        guide: paths.documents.guide,
        signIn: paths.auth.signIn,
        signUp: paths.auth.signUp,
        forgot: paths.auth.forgot,
        app: paths.console.app,
        appDetails: paths.console.appDetails,
        wallet: paths.console.wallet,
      };
}

/** The slice of a menu entry the landing rule reads (GET /api/iam/v1/menus). */
interface MenuPath {
  path: string;
  meta?: { isHide?: boolean; isLink?: unknown } | null;
  children?: MenuPath[] | null;
}

/**
 * Where a context switch lands: `here` (path and query) when the new menu grants its path, else
 * the new menu's first visible entry (the console's home when the menu has none).
 */
export function landingAfterSwitch(here: string, menu: MenuPath[]): string {
  const pathname = trimSlash(here.split(/[?#]/)[0] || '/');
  const granted = new Set<string>();
  const walk = (list: MenuPath[]) => {
    for (const e of list) {
      granted.add(e.path.startsWith('/') ? e.path : `/${e.path}`);
      if (e.children?.length) walk(e.children);
    }
  };
  walk(menu);
  if (granted.has(pathname)) return here;
  const first = menu.find((e) => !e.meta?.isHide && !e.meta?.isLink);
  if (!first) return paths.console.app();
  return first.path.startsWith('/') ? first.path : `/${first.path}`;
}
