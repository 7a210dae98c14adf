// Apps over time, as a person sees them (issue 23):
// - a box that went offline while an install was under way: the details page says so and offers
//   Cancel at once; a failed install shows its reason in Chinese (the agent sent a code);
// - with a real agent and real Docker: "Update available" appears when the catalogue has a newer
//   version, the update runs, and the new version is shown.
//
// The server runs with a short heartbeat and offline delay and a manifest file of its own
// (scripts/spec-env: apps-time.spec.mjs), which this spec rewrites for the update.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { test, expect, verifiedAccount, apiSession, signIn, fakeBox } from './fixtures.mjs';
import { needDocker, startAgent } from './agent.mjs';

async function ok(res) {
  const body = await res.json();
  expect(res.status(), JSON.stringify(body)).toBe(200);
  return body.data;
}

test('an offline box offers Cancel at once; a failure reads in Chinese (en, zh)', async ({ page, request, consoleErrors }) => {
  test.setTimeout(120_000);
  const email = `time-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  const auth = await apiSession(request, email);
  const box = await fakeBox(request, auth, 'Flaky box');
  const stuck = await ok(await request.post('/api/rmp/v1/apps/install', { headers: auth, data: { app_id: 'grafana', device_id: box.id } }));
  const failing = await ok(await request.post('/api/rmp/v1/apps/install', { headers: auth, data: { app_id: 'vaultwarden', device_id: box.id } }));
  // The box fails one install with the app's own exit code, then falls silent.
  const cmds = await box.beat();
  const cmd = cmds.find((c) => c.payload.installation_id === failing.id);
  await box.beat({ acks: [{ id: cmd.id, ok: false, error: 'exited', reason: { code: 'exited', exit_code: 1 } }] });

  await signIn(page, email, { redirect: `/app/details?id=${failing.id}`, fresh: true });
  await page.goto(`/app/details?id=${failing.id}&language=zh`);
  await expect(page.locator('.app-details-head .app-status').first()).toHaveText('安装失败');
  await expect(page.locator('.app-reason')).toHaveText('应用已退出（退出码 1）');
  await page.screenshot({ path: 'test-results/apps-time-reason-zh.png', fullPage: true });

  // Offline: the page says so, and Cancel is there at once.
  await page.goto(`/app/details?id=${stuck.id}&language=en`);
  await expect(page.locator('.app-details-head .app-status').first()).toHaveText('Preparing');
  await expect(page.getByTestId('device-offline')).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('offline-hint')).toBeVisible();
  await expect(page.locator('.app-details-head [data-action]')).toHaveCount(1);
  await page.screenshot({ path: 'test-results/apps-time-offline-en.png', fullPage: true });
  await page.locator('.app-details-head').getByRole('button', { name: 'Cancel' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText('Give up what Grafana is doing?');
  await dialog.getByRole('button', { name: 'Give up' }).click();
  await expect(page.locator('.app-details-head .app-status').first()).toHaveText('Not installed');
  await expect(page.locator('.app-history')).toContainText('Cancelled while the device was offline');
  // The list shows the offline box too.
  await page.goto('/app?language=zh');
  await expect(page.locator('.app-row', { hasText: 'Vaultwarden' }).getByTestId('device-offline')).toHaveText('设备离线');
  await page.screenshot({ path: 'test-results/apps-time-list-zh.png', fullPage: true });
  expect(consoleErrors).toEqual([]);
});

test('Update available, update, the new version is shown (real agent and Docker)', async ({ page, request, baseURL, consoleErrors }) => {
  needDocker('apps-time');
  test.setTimeout(240_000);
  const manifests = process.env.ZMARKET_APPS__MANIFESTS;
  const db = join(process.env.E2E_DATA_DIR, 'zmarket.db');
  const write = (image) =>
    writeFileSync(manifests, JSON.stringify({ version: 1, manifests: { grafana: { image, ports: [{ container: 80, web: true }], volumes: [{ name: 'data', path: '/data' }], health: { path: '/' } } } }));
  // This run's own tag of the test image: the new version.
  const newImage = `zmarket-test/httpd:upd-${Date.now()}`;
  execFileSync('docker', ['tag', 'zmarket-test/httpd:1', newImage]);
  write('zmarket-test/httpd:1');
  const email = `update-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  const auth = await apiSession(request, email);
  const agent = startAgent(baseURL, mkdtempSync(join(os.tmpdir(), 'zmarket-time-agent-')), 'Update box');
  let inst;
  try {
    const { id: deviceId, code } = await agent.printed;
    await ok(await request.post('/api/ebs/v2/devices/link', { headers: auth, data: { device_id: deviceId, pairing_code: code } }));
    inst = await ok(await request.post('/api/rmp/v1/apps/install', { headers: auth, data: { app_id: 'grafana', device_id: deviceId } }));
    await signIn(page, email, { redirect: `/app/details?id=${inst.id}`, fresh: true });
    const chip = page.locator('.app-details-head .app-status').first();
    await expect(chip).toHaveText('Running', { timeout: 120_000 });
    const before = await page.getByTestId('app-version').textContent();

    // The operator publishes 2.0.0 with a new image.
    write(newImage);
    execFileSync('python3', ['-c', `import sqlite3; c = sqlite3.connect(${JSON.stringify(db)}); c.execute("UPDATE apps SET version = '2.0.0' WHERE id = 'grafana'"); c.commit()`]);
    await page.waitForTimeout(1200);
    await page.reload();
    await expect(page.getByTestId('update-available')).toHaveText('Update available: 2.0.0');
    await page.screenshot({ path: 'test-results/apps-time-update-available.png', fullPage: true });
    await page.locator('.app-details-head').getByRole('button', { name: 'Update to 2.0.0' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Update to 2.0.0' }).click();
    await expect(chip).toHaveText(/Updating|Running/);
    await expect(page.getByTestId('app-version')).toHaveText('2.0.0', { timeout: 120_000 });
    await expect(chip).toHaveText('Running');
    await expect(page.getByTestId('update-available')).toHaveCount(0);
    expect(before).not.toBe('2.0.0');
    await expect(page.locator('.app-history')).toContainText('2.0.0');
    await page.goto(`/app/details?id=${inst.id}&language=zh`);
    await expect(page.locator('.app-details-head .app-status').first()).toHaveText('运行中');
    await page.screenshot({ path: 'test-results/apps-time-updated-zh.png', fullPage: true });
    expect(consoleErrors).toEqual([]);
  } finally {
    if (inst) {
      await request.post(`/api/rmp/v1/apps/${inst.id}/actions`, { headers: auth, data: { action: 'uninstall' } });
      await expect
        .poll(async () => (await (await request.get(`/api/rmp/v1/apps/${inst.id}`, { headers: auth })).json()).data.status, { timeout: 60_000 })
        .toBe('not_install');
    }
    agent.child.kill();
    try {
      execFileSync('docker', ['rmi', newImage], { stdio: 'ignore' });
    } catch {}
  }
});
