// Checks the import graph of src/ as esbuild resolves it for the two bundles (type-only imports are
// erased and do not count), and the size of the source files:
//   - no import cycle;
//   - dependencies one way: lib ← stores ← api ← components ← pages ← app ← entries
//     (constants.ts, i18n/ and server/ sit below lib);
//   - a page area (pages/<area>/) imports no other area: what two areas share lives in components/
//     (a domain's shared widgets in components/<domain>/), and a widget of components/ that only one
//     page area imports belongs in that area;
//   - no file in src/ over 600 lines, generated and vendored files aside.
import * as esbuild from 'esbuild';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_LINES = 600;
/** Generated (scripts/api-types.mjs) or a third party's, not ours to split. */
const EXEMPT_FROM_SIZE = new Set(['src/api/schema.d.ts', 'src/styles/leaflet.css']);

const LAYERS = ['base', 'lib', 'stores', 'api', 'components', 'pages', 'app', 'entry'];

export function layerOf(file) {
  if (file === 'src/main.tsx' || file === 'src/server.tsx') return 'entry';
  const top = file.split('/')[1];
  if (top === 'constants.ts' || top === 'i18n' || top === 'server' || top === 'styles') return 'base';
  if (LAYERS.includes(top)) return top;
  return null;
}

const areaOf = (file) => (file.startsWith('src/pages/') ? file.split('/')[2] : null);

/** The src/ → src/ import edges of both bundles, dynamic imports included. */
export async function importGraph() {
  const result = await esbuild.build({
    absWorkingDir: here,
    entryPoints: ['src/main.tsx', 'src/server.tsx'],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    splitting: true,
    outdir: join(here, 'dist-imports-unused'),
    platform: 'browser',
    jsx: 'automatic',
    packages: 'external',
    loader: { '.css': 'empty' },
    logLevel: 'silent',
  });
  const graph = new Map();
  for (const [file, info] of Object.entries(result.metafile.inputs)) {
    if (!file.startsWith('src/')) continue;
    graph.set(
      file,
      info.imports.filter((i) => i.path.startsWith('src/')).map((i) => i.path),
    );
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself). */
export function cycles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

export function layerViolations(graph) {
  const out = [];
  for (const [from, tos] of graph) {
    const lf = layerOf(from);
    for (const to of tos) {
      const lt = layerOf(to);
      if (lf === null || lt === null) out.push(`${from} -> ${to}: a file outside the known layers`);
      else if (LAYERS.indexOf(lt) > LAYERS.indexOf(lf)) out.push(`${from} (${lf}) imports ${to} (${lt})`);
      else if (lf === 'pages' && lt === 'pages' && areaOf(from) !== areaOf(to)) out.push(`${from} imports another area's ${to}`);
    }
  }
  return out;
}

/**
 * Files of components/ imported only by the pages of one area (and by nothing else): that area's
 * own widgets, which belong in pages/<area>/. Tests and the entries do not count as importers.
 */
export function misplacedWidgets(graph) {
  const importers = new Map();
  for (const [from, tos] of graph) {
    for (const to of tos) {
      if (layerOf(to) !== 'components') continue;
      if (!importers.has(to)) importers.set(to, new Set());
      importers.get(to).add(areaOf(from) ?? from);
    }
  }
  const out = [];
  for (const [file, from] of importers) {
    const [only] = from;
    if (from.size === 1 && !only.startsWith('src/')) out.push(`${file} is imported only by pages/${only}/: move it there`);
  }
  return out.sort();
}

function sourceFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else out.push(relative(here, p).split('\\').join('/'));
  }
  return out;
}

export function oversized() {
  return sourceFiles(join(here, 'src'))
    .filter((f) => !EXEMPT_FROM_SIZE.has(f))
    .map((f) => [f, readFileSync(join(here, f), 'utf8').split('\n').length - 1])
    .filter(([, n]) => n > MAX_LINES)
    .map(([f, n]) => `${f}: ${n} lines (at most ${MAX_LINES})`);
}

async function main() {
  const graph = await importGraph();
  const found = cycles(graph);
  const layers = [...layerViolations(graph), ...misplacedWidgets(graph)];
  const sizes = oversized();
  const edges = [...graph.values()].reduce((n, e) => n + e.length, 0);
  for (const c of found) console.error(`import cycle: ${c.join(' -> ')}`);
  for (const v of layers) console.error(`layering: ${v}`);
  for (const s of sizes) console.error(`size: ${s}`);
  console.log(
    `check-imports: ${graph.size} files, ${edges} imports, ${found.length} cycles, ${layers.length} layering problems, ${sizes.length} files over ${MAX_LINES} lines`,
  );
  if (found.length || layers.length || sizes.length) process.exit(1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
