import { describe, expect, it } from 'vitest';
import { flattenMenu, visibleMenu } from '../src/app/menu';
import { normalizeMenu } from '../src/api/iam';
import { isGuardExempt, phoneRedirectTarget } from '../src/lib/paths';
import phoneRules from '../src/lib/phone-rules.json';
import { resolveRoute, titleFromHandle } from '../src/app/routes';
import type { MenuEntry } from '../src/api/types';
import * as constants from '../src/constants';
import { badgeText } from '../src/components/Badge';

const menu: MenuEntry[] = [
  {
    path: '/devices',
    name: 'devices',
    component: 'devices',
    meta: { icon: 'devices', title: 'devices', isLink: '', isHide: false },
    children: [
      { path: '/devices/link', name: 'link', component: 'devices/link', meta: { isHide: true } },
      { path: '/devices/details', name: 'details', component: 'devices/details', meta: { isHide: true } },
    ],
  },
  { path: '/account', name: 'account', component: 'account', meta: { isHide: false } },
  { path: '/wallet', name: 'wallet', component: 'wallet', meta: { isHide: true } },
];

describe('menu', () => {
  it('hides isHide entries from the side menu but keeps them as routes', () => {
    const visible = visibleMenu(menu);
    expect(visible.map((e) => e.path)).toEqual(['/devices', '/account']);
    expect(visible[0].children).toEqual([]);
    expect(flattenMenu(menu).map((e) => e.path)).toEqual(['/devices', '/devices/link', '/devices/details', '/account', '/wallet']);
  });
  it('normalizes bad menu data to an empty list', () => {
    expect(normalizeMenu(null)).toEqual([]);
    expect(normalizeMenu({})).toEqual([]);
    expect(normalizeMenu([{ nope: 1 }])).toEqual([]);
  });
  it('routes unknown to 404 and titles known routes', () => {
    expect(resolveRoute('/nowhere').notFound).toBe(true);
    expect(resolveRoute('/market').notFound).toBeFalsy();
    expect(titleFromHandle(resolveRoute('/market'), 'en', 'ZMarket')).toBe('Explore Market - ZMarket');
    expect(titleFromHandle(resolveRoute('/market/'), 'zh', 'ZMarket')).toBe('探索市场 - ZMarket');
    expect(titleFromHandle(resolveRoute('/devices/zcloud/create'), 'en', 'X')).toBe('Create Z-CLOUD - X');
  });
  it('with a menu, known pages outside it are forbidden', () => {
    expect(resolveRoute('/company', menu).titleKey).toBe('forbidden');
    expect(resolveRoute('/devices/link', menu).titleKey).toBe('link_device');
  });
  it('every SPEC.md §2 route exists', () => {
    const all = [
      '/market', '/market/more', '/market/details', '/nearby', '/nearby/details', '/nearby/map', '/on-demand',
      '/on-demand/place-an-order', '/auth/signin', '/auth/signup', '/check-email', '/email-verified', '/company-email',
      '/m/download', '/403', '/404', '/500', '/iam/v1/sme/join', '/pc-web', '/m/market', '/m/market/more',
      '/m/market/details', '/m/nearby', '/m/nearby/details', '/app', '/app/details', '/app/aicompute', '/devices',
      '/devices/link', '/devices/details', '/devices/zcloud/create', '/company', '/company/allocate', '/company/history',
      '/friends', '/friends/tags', '/wallet', '/account', '/account/username', '/account/password', '/messages',
      '/demands-and-offers', '/history', '/', '/auth', '/m',
      // The phone console (issue 41).
      '/m/auth/signin', '/m/auth/signup', '/m/forgot-password', '/m/app', '/m/app/details', '/m/wallet', '/m/notifications',
    ];
    for (const p of all) expect(resolveRoute(p).notFound, p).toBeFalsy();
  });
  it('guard exemptions follow SPEC.md', () => {
    for (const p of ['/pc-web', '/403', '/404', '/500', '/market', '/market/more', '/market/details', '/nearby', '/nearby/details', '/nearby/map', '/on-demand', '/on-demand/place-an-order', '/m/market', '/m/nearby/details', '/auth/signin', '/auth/signup', '/check-email', '/email-verified']) {
      expect(isGuardExempt(p), p).toBe(true);
    }
    for (const p of ['/m/auth/signin', '/m/auth/signup', '/m/forgot-password']) expect(isGuardExempt(p), p).toBe(true);
    for (const p of ['/app', '/devices', '/company-email', '/iam/v1/sme/join', '/m/app', '/m/app/details', '/m/wallet', '/m/notifications/']) {
      expect(isGuardExempt(p), p).toBe(false);
    }
  });
  it('phone redirect', () => {
    const android = 'Mozilla/5.0 (Linux; Android 14) Mobile';
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)';
    expect(phoneRedirectTarget('/market', '', android)).toBe('/m/market');
    expect(phoneRedirectTarget('/devices', '', iphone)).toBe('/m/market');
    expect(phoneRedirectTarget('/m/nearby', '', android)).toBeNull();
    for (const p of ['/email-verified', '/check-email', '/iam/v1/sme/join', '/company-email', '/reset-password']) expect(phoneRedirectTarget(p, '', android)).toBeNull();
    expect(phoneRedirectTarget('/market', '', 'Mozilla/5.0 (Windows NT 10.0)')).toBeNull();
    // Issue 26: a page with a phone twin keeps its subject; others keep only the language.
    expect(phoneRedirectTarget('/market/details', '?id=grafana', iphone)).toBe('/m/market/details?id=grafana');
    expect(phoneRedirectTarget('/nearby/details/', '?id=d1', android)).toBe('/m/nearby/details?id=d1');
    expect(phoneRedirectTarget('/guide', '', android)).toBe('/m/guide');
    // Issue 41: the console pages a phone has open their phone twin, query kept.
    expect(phoneRedirectTarget('/auth/signin', '?redirect=%2Fapp&language=zh', android)).toBe('/m/auth/signin?redirect=%2Fapp&language=zh');
    expect(phoneRedirectTarget('/app/details', '?id=i1', iphone)).toBe('/m/app/details?id=i1');
    expect(phoneRedirectTarget('/wallet/top-up', '', android)).toBe('/m/wallet');
    expect(phoneRedirectTarget('/messages', '?tab=notifications', iphone)).toBe('/m/notifications?tab=notifications');
    expect(phoneRedirectTarget('/friends', '?language=fr', android)).toBe('/m/market');
  });
  it('the phone rules (lib/phone-rules.json, read by the server too) name known pages', () => {
    const MERGED: Record<string, string> = { '/wallet/top-up': '/m/wallet', '/messages': '/m/notifications' };
    expect(phoneRules.exempt).toContain('/reset-password');
    for (const p of phoneRules.exempt) {
      expect(resolveRoute(p).notFound, p).toBeFalsy();
      expect(p.startsWith('/m/'), p).toBe(false);
    }
    expect(phoneRules.twins.length).toBeGreaterThan(0);
    for (const [from, to] of phoneRules.twins) {
      expect(resolveRoute(from).notFound, from).toBeFalsy();
      // A twin is the same page under /m/ (docs/product.md §2 "Phone pages"), but for the two
      // whose phone page holds them: the top-up (/m/wallet redeems) and the notifications tab.
      expect(to, from).toBe(MERGED[from] ?? `/m${from}`);
      expect(resolveRoute(to).notFound, to).toBeFalsy();
    }
  });
});

describe('constants of SPEC.md §9', () => {
  it('are present by name', () => {
    expect(constants.SUCCESS_CODE).toBe(200);
    expect(constants.REQUEST_TIMEOUT_MS).toBe(30000);
    expect(constants.NOTIFICATION_POLL_MS).toBe(10000);
    expect(constants.TOKEN_REFRESH_CHECK_MS).toBe(3600000);
    expect(constants.TOKEN_REFRESH_THRESHOLD_S).toBe(3600);
    expect(constants.UNREAD_PREVIEW_LIMIT).toBe(3);
    expect(constants.POLLING_DEFAULT_INTERVAL_MS).toBe(1000);
    expect(constants.TOAST_DURATION_MS).toBe(3000);
    expect(constants.TOAST_OFFSET_PX).toBe(16);
    expect(constants.NOTIFICATION_DURATION_MS).toBe(4500);
    expect(constants.NOTIFICATION_GAP_PX).toBe(16);
    expect(constants.BADGE_MAX).toBe(99);
    expect(constants.LOADING_FADE_MS).toBe(400);
    expect(constants.BASE_Z_INDEX).toBe(2000);
    expect(constants.THROTTLE_MS).toBe(1000);
    expect(constants.DEBOUNCE_MS).toBe(500);
    expect(constants.LONG_PRESS_MS).toBe(1000);
    expect(constants.SIZE_STEP).toBe(1024);
    expect(constants.EARTH_RADIUS_KM).toBe(6371);
    expect(constants.DEFAULT_THEME_COLOR).toBe('#486aed');
    expect(constants.PROGRESS_MINIMUM).toBe(0.3);
    expect(constants.PROGRESS_SPEED_MS).toBe(500);
    expect(constants.SETTINGS_EFFECT_WINDOW_MS).toBe(600000);
    expect([...constants.LANGUAGES]).toEqual(['zh', 'en']);
    expect([...constants.PLATFORMS]).toEqual(['win', 'mac', 'iphone', 'android']);
  });
  it('badge shows 99+ above 99', () => {
    expect(badgeText(99)).toBe('99');
    expect(badgeText(100)).toBe('99+');
  });
});
