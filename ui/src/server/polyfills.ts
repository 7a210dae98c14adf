// What QuickJS lacks and the server bundle needs. react-router builds URLs (`new URL(…)`);
// core-js-pure's URL/URLSearchParams are self-contained and run in a bare engine.
import URLPolyfill from 'core-js-pure/stable/url/index.js';
import URLSearchParamsPolyfill from 'core-js-pure/stable/url-search-params/index.js';

const g = globalThis as Record<string, unknown>;
if (typeof g.URL !== 'function') g.URL = URLPolyfill;
if (typeof g.URLSearchParams !== 'function') g.URLSearchParams = URLSearchParamsPolyfill;
