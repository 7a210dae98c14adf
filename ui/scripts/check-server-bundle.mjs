// Stand-in for QuickJS until the Rust side runs it: loads <dist>/server.js into a bare V8 context
// (no URL, TextEncoder, timers, Intl, window, document, localStorage; only `console`) and renders
// every route of the fixtures. Exits non-zero, loudly, on any throw or unexpected result.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import vm from 'node:vm';
import { renderCases, state } from '../test/fixtures.mjs';

const dist = resolve(process.argv[2] ?? 'dist');
const code = readFileSync(join(dist, 'server.js'), 'utf8');
const manifest = JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8'));

const problems = [];
const logged = [];
const hostConsole = {
  log: (...a) => logged.push(['log', a.join(' ')]),
  warn: (...a) => logged.push(['warn', a.join(' ')]),
  error: (...a) => logged.push(['error', a.join(' ')]),
};

const context = vm.createContext({ console: hostConsole });
vm.runInContext('delete globalThis.Intl;', context);
const missing = vm.runInContext(
  `['URL','URLSearchParams','TextEncoder','TextDecoder','setTimeout','queueMicrotask','MessageChannel','Intl','window','document','localStorage','process']
     .filter((n) => typeof globalThis[n] !== 'undefined')`,
  context,
);
if (missing.length) problems.push(`the bare context unexpectedly has: ${missing.join(', ')}`);

const started = performance.now();
vm.runInContext(code, context, { filename: 'server.js' });
const loadMs = performance.now() - started;
if (typeof context.zmarketRender !== 'function') problems.push('server.js did not define globalThis.zmarketRender');

let renders = 0;
const timings = [];
for (const [url, overrides, status, title, text] of renderCases) {
  try {
    const t0 = performance.now();
    const out = context.zmarketRender(url, JSON.stringify(state({ url, ...overrides })));
    timings.push(performance.now() - t0);
    if (typeof out !== 'string') throw new Error(`returned ${typeof out}, not a JSON string`);
    const result = JSON.parse(out);
    if (result.status !== status) problems.push(`${url}: status ${result.status}, expected ${status}`);
    if (result.title !== title) problems.push(`${url}: title ${JSON.stringify(result.title)}, expected ${JSON.stringify(title)}`);
    if (typeof result.html !== 'string' || !result.html.includes(text)) problems.push(`${url}: markup lacks ${JSON.stringify(text)}`);
    renders++;
  } catch (err) {
    problems.push(`${url}: threw ${err && err.stack ? err.stack : err}`);
  }
}

// Rendering the same input twice must give the same markup (no state leaks between renders).
const a = context.zmarketRender('/market', JSON.stringify(state()));
context.zmarketRender('/auth/signin', JSON.stringify(state({ lang: 'zh' })));
const b = context.zmarketRender('/market', JSON.stringify(state()));
if (a !== b) problems.push('two renders of /market differ: state leaks between renders');

for (const [level, line] of logged) {
  if (level !== 'log') problems.push(`console.${level} during render: ${line.slice(0, 300)}`);
}

// Browser-only libraries stay out of QuickJS (build.mjs aliases them to stubs in src/server/).
if (code.includes('xterm-scrollable-element')) problems.push('server.js contains xterm.js: alias it to src/server/xterm-stub.ts');

if (!manifest.js || !manifest.css) problems.push(`manifest.json incomplete: ${JSON.stringify(manifest)}`);

if (problems.length) {
  console.error(`check-server-bundle: ${problems.length} problem(s)`);
  for (const p of problems) console.error(' - ' + p);
  process.exit(1);
}
timings.sort((x, y) => x - y);
console.log(
  `check-server-bundle: ok, ${renders} renders in a bare context; load ${loadMs.toFixed(1)} ms, ` +
    `render median ${timings[Math.floor(timings.length / 2)].toFixed(2)} ms, max ${timings[timings.length - 1].toFixed(2)} ms`,
);
