// Connect end to end (docs/connect.md, docs/api.md "Connect") with a real `zmarket agent` and real Docker:
// a person installs the local test app (busybox httpd) on their box, and the app details page's
// Connect section shows Web, Logs and Terminal; Open shows the app's page from its own
// `*.localhost` origin, through the market; the terminal runs `echo hi`; lines written to the
// container's stdout and stderr arrive in the followed logs; then the same page in Chinese.
//
// Needs what apps.spec.mjs needs (a Docker daemon, the test images, the test manifest and a short
// heartbeat), and the apps origin on `*.localhost` (`[connect] apps_domain = "localhost"`, e.g.
// ZMARKET_CONNECT__APPS_DOMAIN=localhost, when the market's public URL is http://127.0.0.1:PORT).
//
// Issue 43, item 3 (no Docker: a box played over HTTP heartbeats): the app origin's cookie is a
// `__Host-` cookie Chromium keeps on http://*.localhost (Secure, host-only, `Path=/`), and a page
// of a neighbouring app origin cannot post to the app with it (403, en and zh).
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { test, expect, verifiedAccount, signIn, apiSession, fakeBox } from './fixtures.mjs';
import { needDocker, removeContainersOf, serverHoldsTestImage, startAgent } from './agent.mjs';

/**
 * A box's agent channel played from here (a bare WebSocket over node:http): the market's streams
 * are refused at once (`not_running`). Resolves with the socket once upgraded.
 */
function playedChannel(baseURL, secret) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseURL}/api/agent/v1/channel`, {
      headers: {
        connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13',
        'sec-websocket-key': crypto.randomBytes(16).toString('base64'), authorization: `Bearer ${secret}`,
      },
    });
    req.on('upgrade', (_res, socket) => {
      const send = (text) => {
        const payload = Buffer.from(text);
        const mask = crypto.randomBytes(4);
        socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload.map((b, i) => b ^ mask[i % 4])]));
      };
      let buf = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 2) {
          let len = buf[1] & 0x7f;
          let off = 2;
          if (len === 126) [len, off] = [buf.length >= 4 ? buf.readUInt16BE(2) : Infinity, 4];
          else if (len === 127) [len, off] = [buf.length >= 10 ? Number(buf.readBigUInt64BE(2)) : Infinity, 10];
          if (buf.length < off + len) return;
          const text = (buf[0] & 0x0f) === 1 ? buf.subarray(off, off + len).toString() : null;
          buf = buf.subarray(off + len);
          const frame = text ? JSON.parse(text) : null;
          if (frame?.t === 'open') send(JSON.stringify({ t: 'close', stream: frame.stream, reason: 'not_running' }));
        }
      });
      resolve(socket);
    });
    req.on('response', (res) => reject(new Error(`the channel was refused: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}

test.describe('connect', () => {

  for (const lang of ['en', 'zh']) {
    test(`an app origin keeps a __Host- cookie and refuses a neighbour's post (${lang})`, async ({ browser, request, baseURL }) => {
      // The browser's own language: the refusal page follows Accept-Language.
      const context = await browser.newContext({ locale: lang === 'zh' ? 'zh-CN' : 'en-US' });
      const page = await context.newPage();
      const email = `origin-${lang}-${Date.now()}@example.com`;
      await verifiedAccount(request, email);
      const auth = await apiSession(request, email);
      const box = await fakeBox(request, auth, `Origin box ${lang}`);
      const installed = await request.post('/api/rmp/v1/apps/install', { headers: auth, data: { app_id: 'grafana', device_id: box.id } });
      expect(installed.ok()).toBeTruthy();
      const id = (await installed.json()).data.id;
      const cmd = (await box.beat()).find((c) => c.payload.installation_id === id);
      await box.beat({ installations: [{ id, status: 'running', url: 'http://10.9.8.7:32768/' }], acks: [{ id: cmd.id, ok: true }] });
      const channel = await playedChannel(baseURL, box.secret);
      const open = () => request.get(`/api/rmp/v1/apps/${id}/open`, { headers: { ...auth, accept: 'application/json' } });
      await expect.poll(async () => (await open()).status()).toBe(200);
      const opened = await open();
      const link = new URL((await opened.json()).data.url);
      const origin = link.origin;
      expect(link.hostname.endsWith('.localhost')).toBeTruthy();

      // The one-time link: the browser keeps the origin's cookie, a __Host- one, on plain HTTP.
      await page.goto(link.href);
      const cookies = await context.cookies(origin);
      expect(cookies.map((c) => c.name)).toEqual(['__Host-zm_app']);
      expect(cookies[0]).toMatchObject({ domain: link.hostname, path: '/', secure: true, httpOnly: true, sameSite: 'Lax' });

      // A neighbour's page (another label on the same apps domain) posts a form to the app: the
      // browser sends the cookie (same site), the market refuses it.
      const neighbour = `${baseURL.replace('127.0.0.1', `${'ab'.repeat(16)}.localhost`)}`;
      await page.goto(`${neighbour}/`);
      const answer = page.waitForResponse((r) => r.url().startsWith(origin) && r.request().method() === 'POST');
      await page.evaluate((target) => {
        const form = document.createElement('form');
        form.method = 'POST';
        form.action = `${target}/api/settings`;
        document.body.append(form);
        form.submit();
      }, origin);
      expect((await answer).status()).toBe(403);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(
        lang === 'zh' ? '此应用不接受来自其他网站的更改请求' : 'This app does not accept changes sent from another site',
      );
      await page.screenshot({ path: `test-results/connect-neighbour-${lang}.png` });
      channel.destroy();
      await context.close();
    });
  }

  test('the Connect section: open the web page, the terminal, the logs (en, zh)', async ({ page, context, request, baseURL, consoleErrors }) => {
    needDocker('connect');
    test.setTimeout(240_000);
    serverHoldsTestImage();

    const email = `connect-${Date.now()}@example.com`;
    await verifiedAccount(request, email);
    const stateDir = mkdtempSync(join(os.tmpdir(), 'zmarket-connect-agent-'));
    const agent = startAgent(baseURL, stateDir, 'e2e connect box');
    // The installations this spec made: only their containers are its to remove (issue 26).
    const installations = [];
    try {
      const { id: deviceId, code } = await agent.printed;
      await signIn(page, email);
      const token = await page.evaluate(() => localStorage.getItem('token'));
      const auth = { authorization: `Bearer ${token}` };
      const bind = await request.post('/api/ebs/v2/devices/link', { headers: auth, data: { device_id: deviceId, pairing_code: code } });
      expect(bind.ok()).toBeTruthy();
      const installed = await request.post('/api/rmp/v1/apps/install', { headers: auth, data: { app_id: 'grafana', device_id: deviceId } });
      expect(installed.ok()).toBeTruthy();
      const id = (await installed.json()).data.id;
      installations.push(id);

      await page.goto(`/app/details?id=${id}`);
      await expect(page.locator('.app-details-head .app-status')).toHaveText('Running', { timeout: 120_000 });
      const connect = page.locator('.connect-section');
      await expect(connect.getByRole('heading', { name: 'Connect', exact: true })).toBeVisible();
      const web = connect.locator('[data-connect="web"]');
      const logs = connect.locator('[data-connect="logs"]');
      const terminal = connect.locator('[data-connect="terminal"]');
      await expect(web).toBeVisible();
      await expect(logs).toBeVisible();
      await expect(terminal).toBeVisible();
      await expect(connect.getByTestId('connect-offline')).toHaveCount(0);

      // Open: a new tab on the app's own origin, through the market, showing the test page.
      const [tab] = await Promise.all([context.waitForEvent('page'), web.getByRole('button', { name: 'Open' }).click()]);
      await tab.waitForURL(/^http:\/\/[^/]+\.localhost:\d+\//, { timeout: 20_000 });
      await expect(tab.getByRole('heading', { name: 'Hello from a zmarket test app' })).toBeVisible();
      expect(new URL(tab.url()).host).not.toBe(new URL(baseURL).host);
      await tab.screenshot({ path: 'test-results/connect-web-tab.png' });
      await tab.close();

      // The terminal: a shell in the container.
      await terminal.getByRole('button', { name: 'Open terminal' }).click();
      await expect(terminal.getByTestId('terminal-state')).toHaveText('Connected', { timeout: 20_000 });
      await terminal.locator('.xterm').click();
      await page.keyboard.type('echo hi\n');
      const rows = terminal.locator('.xterm-rows > div');
      await expect(rows.filter({ hasText: /^\s*hi\s*$/ })).toHaveCount(1, { timeout: 10_000 });
      await page.keyboard.type('echo zm-$((6*7))\n');
      await expect(rows.filter({ hasText: /^\s*zm-42\s*$/ })).toHaveCount(1);

      // Lines written to the container's own stdout and stderr arrive in the followed logs.
      await page.keyboard.type('echo zm-out-line > /proc/1/fd/1; echo zm-err-line > /proc/1/fd/2\n');
      const logView = logs.getByRole('log');
      await expect(logView).toContainText('zm-out-line', { timeout: 15_000 });
      await expect(logView.locator('.log-line.stderr', { hasText: 'zm-err-line' })).toHaveCount(1);
      await expect(logView.locator('.log-line', { hasText: 'zm-out-line' }).locator('.log-stream')).toHaveCount(0);
      await logs.getByRole('searchbox').fill('ZM-ERR');
      await expect(logView.locator('.log-line')).toHaveCount(1);
      await expect(logView.locator('mark')).toHaveText('zm-err');
      await page.screenshot({ path: 'test-results/connect-en.png', fullPage: true });
      await logs.getByRole('searchbox').fill('');

      // The shell's exit closes the terminal with its reason and a Reconnect button.
      await terminal.locator('.xterm').click();
      await page.keyboard.type('exit\n');
      await expect(terminal.getByTestId('terminal-end')).toContainText('The shell has exited.', { timeout: 10_000 });
      await expect(terminal.getByRole('button', { name: 'Reconnect' })).toBeVisible();

      // Chinese: the same doors in Chinese, the logs' tail, the terminal.
      await page.goto(`/app/details?id=${id}&language=zh`);
      const zh = page.locator('.connect-section');
      await expect(zh.getByRole('heading', { name: '连接', exact: true })).toBeVisible({ timeout: 20_000 });
      await expect(zh.locator('[data-connect="web"]').getByRole('button', { name: '打开' })).toBeVisible();
      const zhLogs = zh.locator('[data-connect="logs"]');
      await expect(zhLogs.getByRole('heading', { name: '日志' })).toBeVisible();
      await expect(zhLogs.getByRole('log')).toContainText('zm-out-line', { timeout: 15_000 });
      await expect(zhLogs.getByText('实时跟踪')).toBeVisible();
      const zhTerminal = zh.locator('[data-connect="terminal"]');
      await zhTerminal.getByRole('button', { name: '打开终端' }).click();
      await expect(zhTerminal.getByTestId('terminal-state')).toHaveText('已连接', { timeout: 20_000 });
      await zhTerminal.locator('.xterm').click();
      await page.keyboard.type('echo hi\n');
      await expect(zhTerminal.locator('.xterm-rows > div').filter({ hasText: /^\s*hi\s*$/ })).toHaveCount(1, { timeout: 10_000 });
      await page.screenshot({ path: 'test-results/connect-zh.png', fullPage: true });

      expect(consoleErrors).toEqual([]);
    } finally {
      agent.child.kill('SIGKILL');
      removeContainersOf(installations);
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
