// Apps end to end with a real `zmarket agent` and real Docker: a person installs an app from the
// market details page on their own box, watches it download (from the market's image archive) and
// install, opens the running app, stops and starts it (English), then uninstalls it (Chinese); the
// device page lists it while installed.
//
// The server must run with a test manifest and a short heartbeat (./scripts/test sets both):
//   ZMARKET_DEVICES__HEARTBEAT_SECS=1 ZMARKET_APPS__MANIFESTS=$PWD/apps-manifests.json \
//     npx playwright test tests/apps.spec.mjs
// It needs a Docker daemon and the test images (../scripts/test-images); without a daemon it is skipped.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { test, expect, verifiedAccount, signIn, submitSignIn } from './fixtures.mjs';
import { containersOf, needDocker, removeContainersOf, root, serverHoldsTestImage, startAgent } from './agent.mjs';

test('install from the market on my box, open it, stop, start, uninstall (en, zh)', async ({ page, request, baseURL, consoleErrors }) => {
  needDocker('apps');
  test.setTimeout(240_000);
  // The server holds the image archive; Docker does not have the image yet.
  serverHoldsTestImage();
  try {
    execFileSync('docker', ['rmi', '-f', 'zmarket-test/httpd:1'], { stdio: 'ignore' });
  } catch {}

  const email = `apps-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  const stateDir = mkdtempSync(join(os.tmpdir(), 'zmarket-apps-agent-'));
  const agent = startAgent(baseURL, stateDir, 'e2e apps box');
  // The installations this spec made: only their containers are its to count or remove (issue 26:
  // the Docker may be shared with other tests).
  const installations = [];
  // Someone else's container on the same Docker, under the same label: never counted, never removed.
  execFileSync('docker', ['load', '-i', join(root, 'target/test-images/exit.tar')], { stdio: 'ignore' });
  const foreign = execFileSync('docker', ['create', '--label', `zmarket.installation=not-this-spec-${Date.now()}`, 'zmarket-test/exit:1']).toString().trim();
  try {
    const { id: deviceId, code } = await agent.printed;

    // A visitor's Install goes to sign-in and comes back to the same choice.
    await page.goto('/market/details?id=grafana');
    await page.getByRole('button', { name: 'Install' }).click();
    await expect(page).toHaveURL(/\/auth\/signin/);
    await submitSignIn(page, email);
    await expect(page).toHaveURL(/\/market\/details\?id=grafana&do=install/);
    const token = await page.evaluate(() => localStorage.getItem('token'));
    const bind = await request.post('/api/ebs/v2/devices/link', {
      headers: { authorization: `Bearer ${token}` },
      data: { device_id: deviceId, pairing_code: code },
    });
    expect(bind.ok()).toBeTruthy();
    await page.reload();

    const dialog = page.getByRole('dialog');
    await expect(dialog).toBeVisible();
    const choice = dialog.locator(`[data-device="${deviceId}"]`);
    await expect(choice).toContainText('e2e apps box');
    await expect(choice).toContainText('Fits:');
    await page.screenshot({ path: 'test-results/apps-install-dialog.png' });
    await dialog.getByRole('button', { name: 'Install' }).click();

    // The details page follows the install live to Running.
    await expect(page).toHaveURL(/\/app\/details\?id=/);
    installations.push(new URL(page.url()).searchParams.get('id'));
    const chip = page.locator('.app-details-head .app-status');
    await expect(chip).toHaveText(/Preparing|Downloading|Installing|Installed|Running/);
    await expect(chip).toHaveText('Running', { timeout: 120_000 });
    await expect(page.getByText('Downloading').first()).toBeVisible(); // in the state history
    // Open goes through the market, to the installation's own origin (never the box's address).
    const open = page.locator('.app-details-head').getByRole('button', { name: 'Open' });
    const [appPage] = await Promise.all([page.context().waitForEvent('page'), open.click()]);
    await expect(appPage.getByRole('heading', { name: 'Hello from a zmarket test app' })).toBeVisible();
    expect(new URL(appPage.url()).hostname).toMatch(/^[0-9a-f]{32}\.localhost$/);
    await appPage.close();
    await page.screenshot({ path: 'test-results/apps-details-running.png', fullPage: true });

    // The list: stop, then start again.
    await page.goto('/app');
    const row = page.locator('.app-row', { hasText: 'Grafana' });
    await expect(row.locator('.app-status')).toHaveText('Running');
    await row.getByRole('button', { name: 'Stop' }).click();
    await expect(row.locator('.app-status')).toHaveText('Stopped', { timeout: 60_000 });
    await expect(row.getByRole('button', { name: 'Open' })).toHaveCount(0);
    await row.getByRole('button', { name: 'Start' }).click();
    await expect(row.locator('.app-status')).toHaveText('Running', { timeout: 60_000 });
    await page.screenshot({ path: 'test-results/apps-list-en.png', fullPage: true });

    // The device page lists it.
    await page.goto(`/devices/details?id=${deviceId}`);
    await expect(page.locator('.device-apps .app-row', { hasText: 'Grafana' }).locator('.app-status')).toHaveText('Running');

    // In Chinese: uninstall, confirmed; the list ends empty.
    await page.goto('/app?language=zh');
    const zhRow = page.locator('.app-row', { hasText: 'Grafana' });
    await expect(zhRow.locator('.app-status')).toHaveText('运行中');
    await page.screenshot({ path: 'test-results/apps-list-zh.png', fullPage: true });
    await zhRow.getByRole('button', { name: '卸载' }).click();
    await page.getByRole('dialog').getByRole('button', { name: '卸载' }).click();
    await expect(page.getByText('还没有应用：去市场安装一个吧。')).toBeVisible({ timeout: 60_000 });
    await page.screenshot({ path: 'test-results/apps-empty-zh.png', fullPage: true });
    expect(containersOf(installations)).toEqual([]);
    expect(execFileSync('docker', ['ps', '-aq', '--no-trunc', '--filter', `id=${foreign}`]).toString().trim()).toBe(foreign);

    // Renting: the box's owner offers it at 6 coins an hour; another person rents it from the
    // market for 2 hours, the app runs, seconds are charged and the owner is credited.
    const sharing = await request.put(`/api/ebs/v2/devices/${deviceId}/sharing`, {
      headers: { authorization: `Bearer ${token}` },
      data: { mode: 'manual', rentable: true, price_per_hour: 600 },
    });
    expect(sharing.ok()).toBeTruthy();
    const renter = `renter-${Date.now()}@example.com`;
    await verifiedAccount(request, renter);
    await signIn(page, renter, { redirect: '/market/details?id=grafana&do=rent', fresh: true });
    const rent = page.getByRole('dialog');
    await expect(rent.locator(`[data-device="${deviceId}"]`)).toContainText('6.00');
    await rent.getByLabel('Hours').fill('2');
    await expect(rent.getByTestId('rent-total')).toHaveText('12.00 coins');
    await page.screenshot({ path: 'test-results/apps-rent-dialog.png' });
    await rent.getByRole('button', { name: 'Rent' }).click();
    await expect(page).toHaveURL(/\/app\/details\?id=/);
    installations.push(new URL(page.url()).searchParams.get('id'));
    const rentChip = page.locator('.app-details-head .app-status');
    await expect(rentChip).toHaveText('Running', { timeout: 120_000 });
    await expect(page.getByText('Rental meter')).toBeVisible();
    // The meter posts the running seconds (the job runs every 15 s); the page follows it live.
    await expect(page.getByTestId('rental-billed')).not.toHaveText('0.00 coins', { timeout: 150_000 });
    // Extend (issue 39): an hour more; the wallet holds 6.00 more and the end moves an hour later.
    const endsBefore = await page.getByTestId('rental-ends-at').textContent();
    await page.getByLabel('Extend by (hours)').fill('1');
    await expect(page.getByTestId('extend-note')).toContainText('6.00 coins more for 1 h');
    await page.screenshot({ path: 'test-results/apps-rental-extend.png', fullPage: true });
    await page.getByTestId('extend-form').getByRole('button', { name: 'Extend' }).click();
    await expect(page.getByTestId('rental-ends-at')).not.toHaveText(endsBefore);
    await page.locator('.app-details-head').getByRole('button', { name: 'Stop' }).click();
    await expect(rentChip).toHaveText('Stopped', { timeout: 60_000 });
    await page.screenshot({ path: 'test-results/apps-rented-stopped.png', fullPage: true });
    const ownerWallet = await (await request.get('/api/billing/v1/wallet', { headers: { authorization: `Bearer ${token}` } })).json();
    expect(ownerWallet.data.income_total).toBeGreaterThan(0);
    const billed = Math.round(parseFloat(await page.getByTestId('rental-billed').textContent()) * 100);
    expect(billed).toBeGreaterThan(0);
    // A rental ends (its button says so, issue 44), not "Uninstall".
    await page.locator('.app-details-head').getByRole('button', { name: 'End rental' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'End rental' }).click();
    await expect(rentChip).toHaveText('Not installed', { timeout: 60_000 });
    // The renter's wallet: the signup bonus (100 coins) less what the meter charged, nothing held.
    await page.goto('/wallet');
    const fig = (id) => page.locator(`[data-figure="${id}"] .figure-value`);
    await expect(fig('balance')).toHaveText(((10000 - billed) / 100).toFixed(2));
    await expect(fig('held')).toHaveText('0.00');
    await page.screenshot({ path: 'test-results/apps-renter-wallet.png', fullPage: true });
    // The provider was credited the price less the market fee (10% by default).
    const owner = await (await request.get('/api/billing/v1/wallet', { headers: { authorization: `Bearer ${token}` } })).json();
    expect(owner.data.balance).toBe(10000 + billed - Math.floor(billed / 10));
    expect(consoleErrors).toEqual([]);
  } finally {
    agent.child.kill('SIGKILL');
    // Nothing of this spec is left running, whatever happened above.
    removeContainersOf(installations);
    const foreignLeft = execFileSync('docker', ['ps', '-aq', '--no-trunc', '--filter', `id=${foreign}`]).toString().trim();
    execFileSync('docker', ['rm', '-f', foreign], { stdio: 'ignore' });
    expect(foreignLeft, 'the other container survives this spec').toBe(foreign);
    rmSync(stateDir, { recursive: true, force: true });
  }
});
