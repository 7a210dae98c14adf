// Devices end to end: a real `zmarket agent` process registers with the server the Playwright
// config started, a person binds it in the browser, sees it online with this machine's real CPU
// count, the agent stops and the device goes offline.
//
// Run with short timings, e.g.:
//   ZMARKET_DEVICES__OFFLINE_AFTER_SECS=4 ZMARKET_DEVICES__HEARTBEAT_SECS=1 npx playwright test tests/devices.spec.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { test, expect, verifiedAccount, signIn } from './fixtures.mjs';

const bin = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');
const offlineAfter = Number(process.env.ZMARKET_DEVICES__OFFLINE_AFTER_SECS || 90);
const heartbeat = Number(process.env.ZMARKET_DEVICES__HEARTBEAT_SECS || 30);

/** Starts `zmarket agent` and waits for the device id and pairing code it prints. */
function startAgent(server, stateDir) {
  const child = spawn(bin, ['agent', '--server', server, '--type', 'Z-BOX', '--name', 'e2e box', '--state-dir', stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
  });
  let out = '';
  const printed = new Promise((resolvePrinted, reject) => {
    const onData = (chunk) => {
      out += chunk.toString();
      const id = out.match(/^device id: (\S+)$/m)?.[1];
      const code = out.match(/^pairing code: (\S+)$/m)?.[1];
      if (id && code) resolvePrinted({ id, code });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c) => (out += c.toString()));
    child.on('exit', (code) => reject(new Error(`agent exited with ${code}:\n${out}`)));
  });
  return { child, printed, output: () => out };
}

test('a real agent is bound in the browser, goes online with its CPU count, then offline', async ({
  page,
  request,
  baseURL,
  consoleErrors,
}) => {
  test.setTimeout(60_000 + (offlineAfter + heartbeat) * 2000);
  const email = `devices-${Date.now()}@example.com`;
  await verifiedAccount(request, email);

  const stateDir = mkdtempSync(join(os.tmpdir(), 'zmarket-agent-'));
  const agent = startAgent(baseURL, stateDir);
  try {
    const { id, code } = await agent.printed;
    expect(id).toMatch(/^[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/);
    expect(code).toMatch(/^[2-9A-HJKMNP-Z]{8}$/);

    // Sign in through the page.
    await signIn(page, email, { redirect: '/devices/link' });

    // A wrong pairing code is refused saying the pairing code is wrong (the ID is fine).
    await page.getByLabel('Device ID').fill(id);
    await page.getByLabel('Pairing code').fill(code === '22222222' ? '33333333' : '22222222');
    await page.getByRole('button', { name: 'Bind' }).click();
    await expect(page.getByRole('alert')).toHaveText('The pairing code is wrong: enter the code the box prints next to its device ID');

    // The right one binds and opens the details.
    await page.getByLabel('Pairing code').fill(code);
    await page.getByRole('button', { name: 'Bind' }).click();
    await expect(page).toHaveURL(new RegExp(`/devices/details\\?id=${id}`));
    await expect(page.getByTestId('device-status')).toHaveText('Online');
    await expect(page.getByTestId('device-cpu-cores')).toHaveText(String(os.cpus().length));
    // Sharing: offer it for rent at 2.50 coins an hour.
    await page.getByLabel('Rentable').check();
    await page.getByLabel('Price per hour (coins)').fill('2.50');
    await page.getByRole('button', { name: 'Save' }).first().click();
    await expect(page.getByText('Sharing settings saved')).toBeVisible();
    await page.screenshot({ path: 'test-results/devices-details-online.png', fullPage: true });
    const shared = await request.get(`/api/ebs/v2/devices/${id}`, {
      headers: { authorization: `Bearer ${await page.evaluate(() => localStorage.getItem('token'))}` },
    });
    expect((await shared.json()).data).toMatchObject({ rentable: true, price_per_hour: 250, sharing_mode: 'manual' });

    // The list shows it online.
    await page.goto('/devices');
    const row = page.locator(`tr[data-device-id="${id}"]`);
    await expect(row).toContainText('e2e box');
    await expect(row).toContainText('Online');
    await page.screenshot({ path: 'test-results/devices-list-online.png', fullPage: true });

    // The agent stops: the device goes offline, and the open page shows it (live status).
    agent.child.kill('SIGTERM');
    await expect(row).toContainText('Offline', { timeout: (offlineAfter + 20) * 1000 });
    await page.getByLabel('Status').selectOption('offline');
    await expect(page.locator(`tr[data-device-id="${id}"]`)).toBeVisible();
    await page.screenshot({ path: 'test-results/devices-list-offline.png', fullPage: true });

    // The owner is told: the bell (stats polled every 10 s) counts it, the preview shows it, and
    // marking it read clears the count.
    const bell = page.locator('header').getByRole('button', { name: 'Notifications' });
    await expect(bell.locator('.badge')).toHaveText('1', { timeout: 15_000 });
    await bell.click();
    const popover = page.locator('.notifications-popover');
    await expect(popover).toContainText('Device offline');
    await expect(popover).toContainText(id);
    await page.screenshot({ path: 'test-results/devices-notification.png' });
    await popover.getByRole('button', { name: 'Mark as read' }).click();
    await expect(popover).toContainText('No unread notifications');
    await expect(bell.locator('.badge')).toHaveCount(0);

    // In Chinese.
    await page.goto(`/devices/details?id=${id}&language=zh`);
    await expect(page.getByTestId('device-status')).toHaveText('离线');
    await page.screenshot({ path: 'test-results/devices-details-zh.png', fullPage: true });
    await page.goto('/devices/zcloud/create?language=en');
    await expect(page.getByText('No server group host has free capacity now.')).toBeVisible();
    await page.screenshot({ path: 'test-results/devices-zcloud-create.png', fullPage: true });
    expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  } finally {
    agent.child.kill('SIGKILL');
    rmSync(stateDir, { recursive: true, force: true });
  }
});
