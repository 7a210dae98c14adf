// The server's router: react-router's StaticRouter with a navigator whose `encodeLocation` does
// not build a `URL` for the plain in-app paths the pages link to. StaticRouter's navigator runs
// `new URL(href, 'http://localhost')` for every NavLink and every matched route; in QuickJS that
// is core-js's URL parser, about 0.1 ms a call (docs/performance.md). Anything but a plain path
// still goes through `URL`, so the result is always what StaticRouter's would be (a unit test
// compares the two on a list of paths).
import type { ReactNode } from 'react';
import { createPath, NavigationType, parsePath, Router, type Navigator, type Path, type To } from 'react-router';

/** Characters WHATWG URL parsing leaves as they are in a path, a query and a fragment (`'` is
 *  escaped in a query, so it is not here). */
const SAFE = "A-Za-z0-9\\-._~!$&()*+,;=:@/%";
const PLAIN = new RegExp(`^(/(?!/)[${SAFE}]*)(\\?[${SAFE}?]*)?(#[${SAFE}?]*)?$`);
/** A dot segment (`/.`, `/..`, also escaped) is resolved by URL: left to it. */
const DOTS = /\/\.|%2e/i;

/** What StaticRouter's `encodeLocation` answers, without a URL for a plain path. */
export function encodeLocation(to: To): Path {
  const href = typeof to === 'string' ? to : createPath(to);
  const m = PLAIN.exec(href);
  if (m && !DOTS.test(m[1])) {
    const search = m[2] && m[2].length > 1 ? m[2] : '';
    const hash = m[3] && m[3].length > 1 ? m[3] : '';
    return { pathname: m[1], search, hash };
  }
  const url = new URL(href.replace(/ $/, '%20'), 'http://localhost');
  return { pathname: url.pathname, search: url.search, hash: url.hash };
}

const refuse = (what: string) => () => {
  throw new Error(`navigator.${what}() cannot be used on the server`);
};

const navigator: Navigator = {
  createHref: (to: To) => (typeof to === 'string' ? to : createPath(to)),
  encodeLocation,
  push: refuse('push'),
  replace: refuse('replace'),
  go: refuse('go'),
};

/** StaticRouter (react-router 7) with the navigator above: a location that never changes. */
export function ServerRouter({ location, children }: { location: string; children: ReactNode }) {
  const path = parsePath(location);
  const loc = { pathname: path.pathname || '/', search: path.search || '', hash: path.hash || '', state: null, key: 'default' };
  return (
    <Router location={loc} navigationType={NavigationType.Pop} navigator={navigator} static>
      {children}
    </Router>
  );
}
