// Builds the UI bundles for the binary (docs/ui-contract.md): node build.mjs <outdir> [--watch]
//   <outdir>/client/        browser ESM bundle, code-split, hashed names
//   <outdir>/server.js      IIFE for QuickJS defining globalThis.zmarketRender
//   <outdir>/manifest.json  {"js": "main-HASH.js", "css": "main-HASH.css", "preload": [...], "boot": "boot-HASH.js"}
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const isMain = Boolean(process.argv[1]) && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
const args = isMain ? process.argv.slice(2) : [];
const watch = args.includes('--watch');
const outArg = args.find((a) => !a.startsWith('--'));
if (isMain && !outArg) {
  console.error('usage: node build.mjs <outdir> [--watch]');
  process.exit(2);
}
const outdir = resolve(outArg ?? 'dist');
const clientDir = join(outdir, 'client');

/**
 * react-dom's legacy-only browser server build: renderToString without MessageChannel or
 * TextEncoder, smaller and faster in QuickJS. It is not in react-dom's exports map, so it is reached
 * by file path; that path changed between React 18 and 19, hence the loud check (and a unit test).
 */
export const LEGACY_SERVER_BUILD = join(here, 'node_modules/react-dom/cjs/react-dom-server-legacy.browser.production.js');

const define = { 'process.env.NODE_ENV': '"production"' };

const clientOptions = {
  absWorkingDir: here,
  entryPoints: { main: 'src/main.tsx', boot: 'src/boot.ts' },
  outdir: clientDir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  sourcemap: false,
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  jsx: 'automatic',
  define,
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
};

const serverOptions = {
  absWorkingDir: here,
  entryPoints: ['src/server.tsx'],
  outfile: join(outdir, 'server.js'),
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  jsx: 'automatic',
  define,
  // The map (Leaflet) and the terminal (xterm.js) only ever run in the browser, after hydration:
  // keep them out of QuickJS.
  alias: {
    'react-dom/server': LEGACY_SERVER_BUILD,
    leaflet: join(here, 'src/server/leaflet-stub.ts'),
    '@xterm/xterm': join(here, 'src/server/xterm-stub.ts'),
    '@xterm/addon-fit': join(here, 'src/server/xterm-stub.ts'),
  },
  // Styles belong to the client bundle only.
  loader: { '.css': 'empty' },
  legalComments: 'none',
  logLevel: 'warning',
};

/**
 * Finds the entry chunk, its CSS and the chunks it imports statically (transitively) in the
 * metafile, and the boot script (src/boot.ts). The server names the entry and its chunks on the
 * boot script's tag; boot preloads them together once the first paint is on screen, instead of the
 * browser discovering them one level at a time after the entry runs.
 */
export function manifestFrom(metafile) {
  const rel = (p) => relative(clientDir, resolve(here, p)).split('\\').join('/');
  const boot = Object.entries(metafile.outputs).find(([, info]) => info.entryPoint === 'src/boot.ts');
  // The Chinese messages' own chunk (a dynamic import's entry): the document preloads it for a
  // Chinese page.
  const zh = Object.entries(metafile.outputs).find(([file, info]) => file.endsWith('.js') && info.entryPoint === 'src/i18n/zh.ts');
  for (const [file, info] of Object.entries(metafile.outputs)) {
    if (info.entryPoint === 'src/main.tsx') {
      const preload = [];
      const seen = new Set([file]);
      // The entry's static imports, and the app (src/app/start.tsx), which the entry imports
      // dynamically to evaluate it in a task of its own (src/main.tsx), with its static imports.
      const staged = Object.entries(metafile.outputs)
        .filter(([, o]) => o.entryPoint === 'src/app/start.tsx')
        .map(([f]) => f);
      if (staged.length !== 1) throw new Error('build.mjs: no chunk of its own for src/app/start.tsx (src/main.tsx imports it dynamically)');
      for (const f of staged) {
        seen.add(f);
        preload.push(rel(f));
      }
      const queue = [file, ...staged];
      while (queue.length) {
        const out = metafile.outputs[queue.shift()];
        for (const imp of out?.imports ?? []) {
          if (imp.kind !== 'import-statement' || imp.external || seen.has(imp.path)) continue;
          seen.add(imp.path);
          queue.push(imp.path);
          preload.push(rel(imp.path));
        }
      }
      return { js: rel(file), css: info.cssBundle ? rel(info.cssBundle) : '', preload, boot: boot ? rel(boot[0]) : '', messages: zh ? { zh: rel(zh[0]) } : {} };
    }
  }
  throw new Error('build.mjs: no entry chunk for src/main.tsx in the metafile');
}

function writeManifest(metafile) {
  const manifest = manifestFrom(metafile);
  writeFileSync(join(outdir, 'manifest.json'), JSON.stringify(manifest) + '\n');
  return manifest;
}

const manifestPlugin = {
  name: 'manifest',
  setup(build) {
    build.onEnd((result) => {
      if (!result.errors.length && result.metafile) {
        const m = writeManifest(result.metafile);
        if (watch) console.log(`client rebuilt: ${m.js} ${m.css}`);
      }
    });
  },
};

async function main() {
  if (!existsSync(LEGACY_SERVER_BUILD)) {
    throw new Error(
      `build.mjs: ${LEGACY_SERVER_BUILD} is missing. react-dom renamed its legacy server build; ` +
        'update LEGACY_SERVER_BUILD (see SSR.md) or alias react-dom/server to server.edge plus a TextEncoder polyfill.',
    );
  }
  rmSync(clientDir, { recursive: true, force: true });
  mkdirSync(clientDir, { recursive: true });
  if (watch) {
    const client = await esbuild.context({ ...clientOptions, plugins: [manifestPlugin] });
    const server = await esbuild.context(serverOptions);
    await Promise.all([client.watch(), server.watch()]);
    console.log(`watching: ${relative(process.cwd(), outdir) || '.'}`);
    return;
  }
  const [client] = await Promise.all([esbuild.build(clientOptions), esbuild.build(serverOptions)]);
  const m = writeManifest(client.metafile);
  console.log(`built ${relative(process.cwd(), outdir) || '.'}: client/${m.js}, client/${m.css}, server.js`);
}

if (isMain) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
