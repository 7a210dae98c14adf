import type { MenuEntry } from '../api/types';
import { PHONE_PLATFORMS } from '../constants';

/** Paths that need no sign-in (SPEC.md §2 "Guard exemptions"). */
const EXEMPT_EXACT = new Set([
  '/pc-web',
  '/403',
  '/404',
  '/500',
  '/market',
  '/market/more',
  '/market/details',
  '/nearby',
  '/nearby/details',
  '/nearby/map',
  // Issue 6 lists the on-demand pages as public pages under the front layout (SPEC.md §2
  // "Public routes"); submitting an order still needs a sign-in.
  '/on-demand',
  '/on-demand/place-an-order',
  '/auth/signin',
  '/auth/signup',
  '/check-email',
  '/email-verified',
]);

export function trimSlash(pathname: string): string {
  return pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
}

export function isGuardExempt(pathname: string): boolean {
  const p = trimSlash(pathname);
  return EXEMPT_EXACT.has(p) || p === '/m' || p.startsWith('/m/');
}

/** Paths a phone may stay on (SPEC.md §2); everything else not under /m/ goes to /m/market. */
const PHONE_EXEMPT = new Set(['/email-verified', '/check-email', '/iam/v1/sme/join', '/company-email']);

export function isPhoneUserAgent(ua: string | undefined | null): boolean {
  const lower = (ua ?? '').toLowerCase();
  return PHONE_PLATFORMS.some((p) => lower.includes(p));
}

export function phoneRedirectTarget(pathname: string, ua: string | undefined | null): string | null {
  if (!isPhoneUserAgent(ua)) return null;
  const p = trimSlash(pathname);
  if (p.startsWith('/m/') || PHONE_EXEMPT.has(p)) return null;
  return '/m/market';
}

/** Accepts the API's menu data defensively: anything that is not a list of entries becomes []. */
export function normalizeMenu(data: unknown): MenuEntry[] {
  if (!Array.isArray(data)) return [];
  return data
    .filter((e): e is MenuEntry => Boolean(e) && typeof (e as MenuEntry).path === 'string')
    .map((e) => ({ ...e, children: e.children ? normalizeMenu(e.children) : undefined }));
}

/** Every entry, hidden ones included: these become routes. */
export function flattenMenu(entries: MenuEntry[]): MenuEntry[] {
  const out: MenuEntry[] = [];
  const walk = (list: MenuEntry[]) => {
    for (const e of list) {
      out.push(e);
      if (e.children?.length) walk(e.children);
    }
  };
  walk(entries);
  return out;
}

/** What the side menu shows: entries flagged isHide are dropped (with their children). */
export function visibleMenu(entries: MenuEntry[]): MenuEntry[] {
  return entries
    .filter((e) => !e.meta?.isHide)
    .map((e) => ({ ...e, children: e.children ? visibleMenu(e.children) : undefined }));
}

export function isExternalLink(entry: MenuEntry): string | null {
  const link = entry.meta?.isLink;
  return typeof link === 'string' && /^https?:\/\//.test(link) ? link : null;
}
