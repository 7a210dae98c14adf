// End-to-end tests against the release binary in Debian's Chromium (/usr/bin/chromium).
// The server starts on a free port with a fresh data directory for each run.
import { defineConfig } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const port = Number(process.env.E2E_PORT || 18080);
// E2E_BASE_URL: test a server that is already running (scripts/two-instances: two instances
// behind a proxy, sharing E2E_DATA_DIR) instead of starting one.
const external = process.env.E2E_BASE_URL;
const bin = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../target/release/zmarket');
const dataDir = process.env.E2E_DATA_DIR || mkdtempSync(join(tmpdir(), 'zmarket-e2e-'));
process.env.E2E_DATA_DIR = dataDir;

export default defineConfig({
  testDir: './tests',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  // E2E_OUTPUT_DIR: scripts/test runs two spec lanes at once, each with its own results folder.
  outputDir: process.env.E2E_OUTPUT_DIR || './test-results',
  use: {
    baseURL: external || `http://127.0.0.1:${port}`,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
  webServer: external ? undefined : {
    command: `"${bin}" serve --bind 127.0.0.1:${port} --data-dir "${dataDir}"`,
    url: `http://127.0.0.1:${port}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      ZMARKET_SERVER__PUBLIC_URL: `http://127.0.0.1:${port}`,
      ZMARKET_DEVICES__OFFLINE_AFTER_SECS: process.env.ZMARKET_DEVICES__OFFLINE_AFTER_SECS || '90',
      ZMARKET_DEVICES__HEARTBEAT_SECS: process.env.ZMARKET_DEVICES__HEARTBEAT_SECS || '30',
      // The apps spec replaces a catalogue app's manifest with a local test image (e2e/apps-manifests.json).
      ZMARKET_APPS__MANIFESTS: process.env.ZMARKET_APPS__MANIFESTS || '',
      // The orders spec follows the order job; a short sweep keeps it quick.
      ZMARKET_ORDERS__SWEEP_SECS: process.env.ZMARKET_ORDERS__SWEEP_SECS || '5',
    },
  },
});
