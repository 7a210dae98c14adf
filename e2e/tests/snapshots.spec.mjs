// Snapshots (issue 40) end to end with a real `zmarket agent` and real Docker: a person installs
// the test app on their bound box, takes a snapshot on its page (listed Ready with its size, on the
// box), keeps it on the market, downloads it (a zstd archive), uninstalls the app and finds the
// snapshot under /app's "Kept data", restores it onto the same box (a new installation that runs),
// takes and deletes another one; in Chinese the section, the daily backup (a bad number refused,
// a good one saved) and the kept data's labels, then deletes the kept snapshot. Screenshots at
// desktop width and at 390 px.
//
// The server runs with the test manifests and a short heartbeat (scripts/spec-env); it needs a
// Docker daemon and the test images (../scripts/test-images); without a daemon it is skipped.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { test, expect, verifiedAccount, apiSession, signIn } from './fixtures.mjs';
import { needDocker, removeContainersOf, serverHoldsTestImage, startAgent } from './agent.mjs';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/**
 * A full-page screenshot at 390 px: the page is opened again at that width (the console's side
 * menu becomes a drawer that would still be sliding away), then back at desktop width.
 */
async function phoneShot(page, path, shown) {
  await page.setViewportSize(PHONE);
  await page.goto(page.url());
  await expect(shown).toBeVisible();
  await page.screenshot({ path, fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.goto(page.url());
}

/** The `data` of a 200 answer (the test fails on any other, with the body). */
async function ok(res) {
  const text = await res.text();
  expect(res.status(), text).toBe(200);
  return JSON.parse(text).data;
}

test('snapshots: take, keep on the market, download, restore, delete; the daily backup (en, zh)', async ({ page, request, baseURL, consoleErrors }) => {
  needDocker('snapshots');
  test.setTimeout(480_000);
  serverHoldsTestImage();
  const email = `snapshots-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  const stateDir = mkdtempSync(join(os.tmpdir(), 'zmarket-snapshots-agent-'));
  const agent = startAgent(baseURL, stateDir, 'e2e snapshots box');
  const installations = [];
  try {
    const { id: deviceId, code } = await agent.printed;
    const auth = await apiSession(request, email);
    await ok(await request.post('/api/ebs/v2/devices/link', { headers: auth, data: { device_id: deviceId, pairing_code: code } }));
    const first = await ok(await request.post('/api/rmp/v1/apps/install', { headers: auth, data: { app_id: 'grafana', device_id: deviceId } }));
    installations.push(first.id);

    await page.setViewportSize(DESKTOP);
    await signIn(page, email, { redirect: `/app/details?id=${first.id}` });
    const chip = page.locator('.app-details-head .app-status').first();
    await expect(chip).toHaveText('Running', { timeout: 120_000 });
    const section = page.locator('.snapshots-section');
    await expect(section.getByRole('heading', { name: 'Snapshots', exact: true })).toBeVisible();
    await expect(section.getByTestId('snapshots-empty')).toHaveText('No snapshots yet.');
    // Snapshots are taken in the section, not among the head's actions.
    await expect(page.locator('.app-details-head').getByRole('button', { name: 'Snapshot' })).toHaveCount(0);

    // Take a snapshot: it is made (the app stopped for a consistent copy, then started again) and
    // listed Ready with its size, taken by hand, on the box.
    await section.getByRole('button', { name: 'Take a snapshot' }).click();
    const row = section.locator('.snapshot-row').first();
    await expect(row).toBeVisible();
    const snapId = await row.getAttribute('data-snapshot');
    await expect(row.getByTestId('snapshot-status')).toHaveText('Ready', { timeout: 120_000 });
    await expect(row.getByTestId('snapshot-size')).toHaveText(/^\d+(\.\d+)? (B|KB|MB|GB)$/);
    await expect(row.getByTestId('snapshot-kind')).toHaveText('Taken by hand');
    await expect(row.getByTestId('snapshot-where')).toHaveText('On the box');
    await expect(row.getByTestId('snapshot-version')).toHaveText(await page.getByTestId('app-version').textContent());
    await expect(row).toContainText('To download it, keep it on the market first.');
    await expect(row.getByRole('button', { name: 'Download' })).toHaveCount(0);
    await expect(chip).toHaveText('Running', { timeout: 60_000 });
    await page.screenshot({ path: 'test-results/snapshots-taken-en.png', fullPage: true });

    // Only on the box: the market has nothing to download yet (said in the reader's language).
    const early = await request.get(`/api/rmp/v1/snapshots/${snapId}/download`, { headers: { ...auth, 'accept-language': 'zh' } });
    expect(early.status()).toBe(409);
    const refusal = await early.json();
    expect(refusal.error).toBe('snapshot_not_on_market');
    expect(refusal.msg).toMatch(/[\u4e00-\u9fff]/);

    // Keep it on the market: copied from the box, then downloadable.
    await row.getByRole('button', { name: 'Keep on the market' }).click();
    await expect(row.getByTestId('snapshot-where')).toHaveText('On the market and the box', { timeout: 120_000 });
    await expect(row.getByTestId('snapshot-status')).toHaveText('Ready');
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.tar\.zst$/);
    const bytes = readFileSync(await download.path());
    expect([...bytes.subarray(0, 4)], 'the zstd magic').toEqual([0x28, 0xb5, 0x2f, 0xfd]);
    const listed = await ok(await request.get(`/api/rmp/v1/apps/${first.id}/snapshots`, { headers: auth }));
    const kept = listed.items.find((s) => s.id === snapId);
    expect(kept.size).toBe(bytes.length);
    if (kept.sha256) expect(createHash('sha256').update(bytes).digest('hex')).toBe(kept.sha256);
    await page.screenshot({ path: 'test-results/snapshots-on-market-en.png', fullPage: true });

    // A box holds one installation of an app: while this one is there, Restore cannot pick its box.
    await row.getByRole('button', { name: 'Restore' }).click();
    const here = page.getByRole('dialog').locator(`[data-device="${deviceId}"]`);
    await expect(here).toContainText('Already installed here');
    await expect(here.locator('input')).toBeDisabled();
    await expect(page.getByRole('dialog').getByTestId('restore-installed-hint')).toContainText('uninstall it there first');
    await expect(page.getByRole('dialog').getByRole('button', { name: 'Restore' })).toBeDisabled();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    // Uninstall it, and its data is "Kept data" on /app.
    await page.locator('.app-details-head').getByRole('button', { name: 'Uninstall' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Uninstall' }).click();
    await expect(chip).toHaveText('Not installed', { timeout: 60_000 });
    // Its snapshot stays listed on its page; a removed app has no daily backup to set.
    await expect(row.getByTestId('snapshot-status')).toHaveText('Ready');
    await expect(section.getByTestId('backups-form')).toHaveCount(0);
    await page.goto('/app');
    const keptData = page.locator('.kept-data');
    await expect(keptData.getByRole('heading', { name: 'Kept data' })).toBeVisible();
    const keptRow = keptData.locator(`[data-snapshot="${snapId}"]`);
    await expect(keptRow).toContainText('Grafana');
    await expect(keptRow.getByTestId('snapshot-status')).toHaveText('Ready');
    await page.screenshot({ path: 'test-results/snapshots-kept-data-en.png', fullPage: true });
    await phoneShot(page, 'test-results/snapshots-kept-data-390.png', keptRow);

    // Restore it onto the same box: the device-fit list, then the new installation's page, running.
    await keptRow.getByRole('button', { name: 'Restore' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByRole('heading', { name: 'Restore Grafana' })).toBeVisible();
    const choice = dialog.locator(`[data-device="${deviceId}"]`);
    await expect(choice).toContainText('e2e snapshots box');
    await expect(choice).toContainText('Fits:');
    await expect(choice.locator('input')).toBeChecked();
    await page.screenshot({ path: 'test-results/snapshots-restore-dialog-en.png' });
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await expect(page).toHaveURL(/\/app\/details\?id=/);
    const restoredId = new URL(page.url()).searchParams.get('id');
    expect(restoredId).not.toBe(first.id);
    installations.push(restoredId);
    await expect(chip).toHaveText('Running', { timeout: 180_000 });
    await expect(page.getByTestId('app-version')).toHaveText(kept.version);

    // Another snapshot of the restored installation, deleted once confirmed.
    await section.getByRole('button', { name: 'Take a snapshot' }).click();
    const second = section.locator('.snapshot-row').first();
    await expect(second.getByTestId('snapshot-status')).toHaveText('Ready', { timeout: 120_000 });
    await expect(chip).toHaveText('Running', { timeout: 60_000 });
    await page.screenshot({ path: 'test-results/snapshots-restored-en.png', fullPage: true });
    await phoneShot(page, 'test-results/snapshots-restored-390.png', second.getByTestId('snapshot-status'));
    await second.getByRole('button', { name: 'Delete' }).click();
    await expect(page.getByRole('dialog')).toContainText('This cannot be undone.');
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect(section.locator('.snapshot-row')).toHaveCount(0);
    await expect(section.getByTestId('snapshots-empty')).toBeVisible();

    // In Chinese: the section and the daily backup; a bad number is refused before it is sent.
    await page.goto(`/app/details?id=${restoredId}&language=zh`);
    await expect(chip).toHaveText('运行中');
    await expect(section.getByRole('heading', { name: '快照', exact: true })).toBeVisible();
    await expect(section.getByRole('button', { name: '创建快照' })).toBeVisible();
    await expect(section.getByTestId('snapshots-empty')).toHaveText('还没有快照。');
    const backups = section.getByTestId('backups-form');
    await expect(backups.getByRole('heading', { name: '每日备份' })).toBeVisible();
    await backups.getByLabel('每天创建一个快照').check();
    await backups.getByLabel('保留份数').fill('0');
    await backups.getByRole('button', { name: '保存' }).click();
    await expect(backups.locator('.field-error')).toHaveText('请输入 1 到 30 之间的整数');
    // The server refuses it too, naming the field.
    const tooMany = await request.put(`/api/rmp/v1/apps/${restoredId}/backups`, { headers: auth, data: { enabled: true, keep: 31 } });
    expect(tooMany.status()).toBe(400);
    expect((await tooMany.json()).data?.field).toBe('keep');
    await backups.getByLabel('保留份数').fill('3');
    await backups.getByRole('button', { name: '保存' }).click();
    await expect(page.getByText('每日备份已保存')).toBeVisible();
    await expect(backups.locator('.field-error')).toHaveCount(0);
    const schedule = await ok(await request.get(`/api/rmp/v1/apps/${restoredId}/snapshots`, { headers: auth }));
    expect(schedule.backups).toEqual({ enabled: true, keep: 3 });
    await page.reload();
    await expect(backups.getByLabel('每天创建一个快照')).toBeChecked();
    await expect(backups.getByLabel('保留份数')).toHaveValue('3');
    await page.screenshot({ path: 'test-results/snapshots-zh.png', fullPage: true });
    await phoneShot(page, 'test-results/snapshots-zh-390.png', backups);

    // The kept data in Chinese, then deleted: the list goes with its last snapshot.
    await page.goto('/app?language=zh');
    await expect(keptData.getByRole('heading', { name: '保留的数据' })).toBeVisible();
    await expect(keptRow.getByTestId('snapshot-status')).toHaveText('就绪');
    await expect(keptRow.getByTestId('snapshot-kind')).toHaveText('手动创建');
    await expect(keptRow.getByTestId('snapshot-where')).toHaveText(/在市场/);
    await expect(keptRow.getByRole('button', { name: '下载' })).toBeVisible();
    await expect(keptRow.getByRole('button', { name: '恢复' })).toBeVisible();
    await page.screenshot({ path: 'test-results/snapshots-kept-data-zh.png', fullPage: true });
    await keptRow.getByRole('button', { name: '删除' }).click();
    await expect(page.getByRole('dialog')).toContainText('删除 Grafana 在');
    await page.getByRole('dialog').getByRole('button', { name: '删除' }).click();
    await expect(keptData).toHaveCount(0);
    expect(consoleErrors).toEqual([]);
  } finally {
    agent.child.kill('SIGKILL');
    removeContainersOf(installations);
    rmSync(stateDir, { recursive: true, force: true });
  }
});
