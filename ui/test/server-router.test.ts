// The server render's shortcuts give what react-router itself gives (docs/performance.md): the
// server navigator's encodeLocation is StaticRouter's (a URL against http://localhost), and the
// matched branch of the route table matches exactly as the whole table does.
import { describe, expect, it } from 'vitest';
import { matchRoutes, type RouteObject } from 'react-router';
import { encodeLocation } from '../src/server/router';
import { buildRoutes, matchedBranch } from '../src/app/routes';
import { consolePages, paths } from '../src/lib/paths';
import type { MenuEntry } from '../src/api/types';

/** StaticRouter's encodeLocation (react-router 7). */
function viaUrl(href: string) {
  const u = new URL(href.replace(/ $/, '%20'), 'http://localhost');
  return { pathname: u.pathname, search: u.search, hash: u.hash };
}

const hrefs = [
  '/', '/market', '/market/', '/market?category=AI', '/market/more?keyword=a%20b&category=', '/market/details?id=0198-ab_c.d~e',
  '/m/market?language=zh', '/nearby#map', '/nearby?#', '/nearby?', '/nearby#', '/a?b?c', '/a#b?c', '/a:b@c/!$&()*+,;=',
  '/%', '/%zz/x', '/%2e%2E/x', '/./a', '/a/../b', '/a/.', '/.well-known/x', '//evil.example/x', '/a b', '/a ', '/é',
  "/a'b?c'd", '/a"b', '/a<b>?x<y>#z<w>', '/a\\b', '/a`b?c`d#e`f', '/a{b}', '/q?x=1&y=%41', '/h#a#b', 'relative/path', '?only=query', '#only',
];

describe('the server navigator', () => {
  it.each(hrefs)('encodes %j as a URL would', (href) => {
    expect(encodeLocation(href)).toEqual(viaUrl(href));
  });
  it('takes Path objects as StaticRouter does', () => {
    expect(encodeLocation({ pathname: '/market', search: '?category=AI', hash: '' })).toEqual(viaUrl('/market?category=AI'));
  });
});

const menu: MenuEntry[] = [
  { path: '/devices', name: 'devices', component: 'devices', meta: { isHide: false } },
  { path: '/account', name: 'account', component: 'account', meta: { isHide: false } },
  { path: 'wallet', name: 'wallet', component: 'nothing-known', meta: { isHide: false, title: 'Wallet' } },
];

function summary(routes: RouteObject[], pathname: string) {
  return (matchRoutes(routes, { pathname }) ?? []).map((m) => ({ element: m.route.element, handle: m.route.handle, path: m.route.path, params: m.params, pathname: m.pathname, pathnameBase: m.pathnameBase }));
}

describe('matchedBranch', () => {
  const publicPaths = Object.values(paths).flatMap((v) => ('pattern' in v ? [v] : Object.values(v))) as { pattern: string }[];
  const pathnames = [
    ...publicPaths.map((p) => p.pattern),
    ...consolePages.map((p) => p.pattern),
    '/', '/market/', '/no/such/page', '/devices/unknown', '/wallet', '/foo bar', '/MARKET',
  ];
  it.each([
    ['without a menu', null],
    ['with a menu', menu],
  ] as const)('matches every path as the whole table does, %s', (_, m) => {
    const routes = buildRoutes(m ? [...m] : null);
    for (const pathname of pathnames) {
      expect(summary(matchedBranch(routes, pathname), pathname), pathname).toEqual(summary(routes, pathname));
    }
  });
  it('is remembered per table and path', () => {
    const routes = buildRoutes(null);
    expect(matchedBranch(routes, '/market')).toBe(matchedBranch(routes, '/market'));
    expect(matchedBranch(routes, '/market')).not.toBe(matchedBranch(routes, '/nearby'));
  });
});
