#!/usr/bin/env node
// Prints the user guide (the /guide page, the same source the app shows) to PDF in English and
// Chinese with Chromium's print-to-PDF: assets/documents/zmarket-guide-{en,zh}.pdf, which the
// binary embeds and serves at /assets/documents/…. Run after changing assets/documents/guide.*.html:
//
//   cargo build --release && node scripts/guide-pdf.mjs [--bin target/release/zmarket]
//
// then rebuild (the PDFs are embedded) and commit them. Needs e2e/node_modules (npm ci in e2e/)
// and Debian's Chromium (/usr/bin/chromium, or CHROMIUM_PATH).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const binArg = args.indexOf('--bin');
const bin = resolve(binArg >= 0 ? args[binArg + 1] : join(root, 'target/release/zmarket'));
const { chromium } = createRequire(join(root, 'e2e/package.json'))('@playwright/test');

const freePort = () =>
  new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });

async function waitHealthy(base) {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${base} did not start`);
}

const port = await freePort();
const data = mkdtempSync(join(tmpdir(), 'zmarket-guide-'));
const base = `http://127.0.0.1:${port}`;
const server = spawn(bin, ['serve', '--bind', `127.0.0.1:${port}`, '--data-dir', data], { stdio: ['ignore', 'ignore', 'inherit'] });
const browser = await (async () => {
  await waitHealthy(base);
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
})();
try {
  for (const lang of ['en', 'zh']) {
    const page = await browser.newPage();
    await page.goto(`${base}/guide?language=${lang}`, { waitUntil: 'networkidle' });
    await page.waitForSelector('.document-body h1');
    await page.emulateMedia({ media: 'print' });
    const pdf = await page.pdf({
      format: 'A4',
      printBackground: true,
      margin: { top: '18mm', bottom: '18mm', left: '16mm', right: '16mm' },
      displayHeaderFooter: true,
      headerTemplate: '<span></span>',
      footerTemplate: '<div style="font-size:8px;width:100%;text-align:center;color:#666"><span class="pageNumber"></span> / <span class="totalPages"></span></div>',
    });
    const out = join(root, `assets/documents/zmarket-guide-${lang}.pdf`);
    writeFileSync(out, pdf);
    console.log(`${out}: ${pdf.length} bytes`);
    await page.close();
  }
} finally {
  await browser.close();
  server.kill('SIGTERM');
  rmSync(data, { recursive: true, force: true });
}
