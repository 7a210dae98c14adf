// Reports bundle sizes and enforces the first-load budget (DEPENDENCIES.md: ≤ 150 KiB gzip).
// First load = the entry chunk plus every chunk it imports statically, transitively.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_KIB = 150;
const dist = resolve(process.argv[2] ?? 'dist');
const clientDir = join(dist, 'client');
const manifest = JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8'));

const gz = (buf) => gzipSync(buf, { level: 9 }).length;
const kib = (n) => (n / 1024).toFixed(1) + ' KiB';

const seen = new Set();
// The boot script (src/boot.ts) is fetched first, then the entry and what it preloads (the app and
// React, imported dynamically by the entry to be evaluated in tasks of their own, are among them).
const queue = [manifest.js, ...(manifest.boot ? [manifest.boot] : []), ...(manifest.preload ?? [])];
while (queue.length) {
  const file = queue.shift();
  if (seen.has(file)) continue;
  seen.add(file);
  const text = readFileSync(join(clientDir, file), 'utf8');
  // Static imports only: `import … from"./x.js"` and `import"./x.js"`, not `import("./x.js")`.
  for (const m of text.matchAll(/(?:from|import)\s*"\.\/([\w-]+\.js)"/g)) queue.push(m[1]);
}

// The terminal (xterm.js) loads when a person opens it, never with the first load.
const eager = [...seen].filter((f) => readFileSync(join(clientDir, f), 'utf8').includes('xterm-scrollable-element'));
if (eager.length) {
  console.error(`xterm.js is in the first load (${eager.join(', ')}): import it only with import()`);
  process.exit(1);
}

let raw = 0;
let gzip = 0;
for (const f of seen) {
  const buf = readFileSync(join(clientDir, f));
  raw += buf.length;
  gzip += gz(buf);
}
const css = readFileSync(join(clientDir, manifest.css));
const allJs = readdirSync(clientDir).filter((f) => f.endsWith('.js'));
const allRaw = allJs.reduce((n, f) => n + statSync(join(clientDir, f)).size, 0);
const server = readFileSync(join(dist, 'server.js'));

console.log(`first-load JS: ${seen.size} files, ${kib(raw)} raw, ${kib(gzip)} gzip (budget ${BUDGET_KIB} KiB gzip)`);
console.log(`CSS: ${kib(css.length)} raw, ${kib(gz(css))} gzip`);
console.log(`all client JS: ${allJs.length} files, ${kib(allRaw)} raw (lazy chunks load on demand)`);
console.log(`server.js: ${kib(server.length)} raw, ${kib(gz(server))} gzip`);
if (gzip > BUDGET_KIB * 1024) {
  console.error(`first-load JS over budget: ${kib(gzip)} > ${BUDGET_KIB} KiB`);
  process.exit(1);
}
