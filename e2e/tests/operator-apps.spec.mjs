// Publishing an app from the operator's console (issue 25 item 3) with a real `zmarket agent` and
// real Docker: an operator publishes an app in the form, uploads a `docker save` archive of its
// image, and a person installs it from the market on a box whose Docker has no copy of that image
// (the agent loads the market's archive) until it runs (English). In Chinese: the list, hide and
// show, top pick, a refused field named under it, and the archive upload.
//
// The image is the local test image re-tagged under a name of this run's own, saved, and the tag
// removed again: zmarket-test/httpd:1 itself is never removed (other specs use it).
// Run with a short heartbeat (scripts/spec-env): ZMARKET_DEVICES__HEARTBEAT_SECS=1.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { test, expect, expectHydrated, verifiedAccount, signIn } from './fixtures.mjs';
import { needDocker, removeContainersOf, root, startAgent } from './agent.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

function operatorGrant(email) {
  return execFileSync(BIN, ['operator', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', email], {
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
    encoding: 'utf8',
  });
}

/** A `docker save` archive of the test image under `ref` (a name of this run), the tag removed. */
function archiveAs(ref, dir) {
  const images = join(root, 'target/test-images');
  if (!existsSync(join(images, 'httpd.tar'))) execFileSync(join(root, 'scripts/test-images'), [images], { stdio: 'inherit' });
  try {
    execFileSync('docker', ['image', 'inspect', 'zmarket-test/httpd:1'], { stdio: 'ignore' });
  } catch {
    execFileSync('docker', ['load', '-i', join(images, 'httpd.tar')], { stdio: 'ignore' });
  }
  execFileSync('docker', ['tag', 'zmarket-test/httpd:1', ref]);
  const file = join(dir, 'image.tar');
  execFileSync('docker', ['save', '-o', file, ref]);
  execFileSync('docker', ['rmi', ref], { stdio: 'ignore' });
  return file;
}

function dockerHas(ref) {
  try {
    execFileSync('docker', ['image', 'inspect', ref], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('an operator publishes an app with its image archive and a box with no copy installs it (en)', async ({ page, request, baseURL, consoleErrors }) => {
  needDocker('operator-apps');
  test.setTimeout(240_000);
  const stamp = Date.now().toString(36);
  const appId = `wiki-${stamp}`;
  const ref = `zmarket-e2e/publish-${stamp}:1`;
  const tmp = mkdtempSync(join(os.tmpdir(), 'zmarket-publish-'));
  const stateDir = mkdtempSync(join(os.tmpdir(), 'zmarket-publish-agent-'));
  const installations = [];
  let agent = null;
  try {
    const archive = archiveAs(ref, tmp);
    expect(dockerHas(ref)).toBe(false);
    const op = `op-apps-${stamp}@example.com`;
    await verifiedAccount(request, op);
    expect(operatorGrant(op)).toContain('is now an operator');
    await signIn(page, op);

    // From the operator's page to the apps.
    await page.goto('/operator');
    await page.locator('main').getByRole('link', { name: 'Apps', exact: true }).click();
    await expect(page).toHaveURL(/\/operator\/apps$/);
    await expect(page.locator('tr[data-app="grafana"]')).toBeVisible();
    await page.getByRole('button', { name: 'Publish an app' }).click();

    // The form: texts in both languages, how it installs.
    await page.getByLabel('App id').fill(appId);
    await page.getByLabel('Name (English)').fill(`Team Wiki ${stamp}`);
    await page.getByLabel('Name (Chinese)').fill(`团队维基 ${stamp}`);
    await page.getByLabel('Summary (English)').fill('The wiki of our teams');
    await page.getByLabel('Summary (Chinese)').fill('我们团队的维基');
    await page.getByLabel('Publisher').fill('Acme IT');
    await page.getByLabel('Image', { exact: true }).fill(ref);
    await page.getByRole('button', { name: 'Add a data folder' }).click();
    await page.getByLabel('Name', { exact: true }).last().fill('data');
    await page.getByLabel('Path in the container').fill('/data');
    await page.getByLabel('Health check path').fill('/');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await expect(page.getByRole('heading', { name: `Edit Team Wiki ${stamp}` })).toBeVisible();
    await expect(page.getByTestId('archive-held')).toHaveText('The market holds no archive of this image: boxes pull it from its registry.');

    // The archive: uploaded, checked, stored.
    // Choosing it starts the upload (issue 44 item 11).
    await page.locator('#app-archive-file').setInputFiles(archive);
    await expect(page.getByRole('status').filter({ hasText: 'Stored' })).toContainText(ref, { timeout: 60_000 });
    await expect(page.getByTestId('archive-held')).toContainText('The market holds an archive of this image');
    await page.screenshot({ path: 'test-results/operator-apps-form-en.png', fullPage: true });

    // The market shows it at once, and search finds it.
    await page.goto(`/market/more?keyword=${encodeURIComponent(`Team Wiki ${stamp}`)}`);
    await expect(page.getByText(`Team Wiki ${stamp}`).first()).toBeVisible();

    // A person installs it on their box, whose Docker has no copy of the image.
    const person = `person-apps-${stamp}@example.com`;
    await verifiedAccount(request, person);
    agent = startAgent(baseURL, stateDir, `publish box ${stamp}`);
    const { id: deviceId, code } = await agent.printed;
    await signIn(page, person, { redirect: `/market/details?id=${appId}&do=install`, fresh: true });
    const token = await page.evaluate(() => localStorage.getItem('token'));
    const bind = await request.post('/api/ebs/v2/devices/link', { headers: { authorization: `Bearer ${token}` }, data: { device_id: deviceId, pairing_code: code } });
    expect(bind.ok()).toBeTruthy();
    await page.reload();
    const dialog = page.getByRole('dialog');
    await dialog.locator(`[data-device="${deviceId}"]`).click();
    await dialog.getByRole('button', { name: 'Install' }).click();
    await expect(page).toHaveURL(/\/app\/details\?id=/);
    installations.push(new URL(page.url()).searchParams.get('id'));
    const chip = page.locator('.app-details-head .app-status');
    await expect(chip).toHaveText('Running', { timeout: 120_000 });
    // It came from the market's archive: the history went through Downloading, and Docker now
    // has the image under the published name.
    await expect(page.getByText('Downloading').first()).toBeVisible();
    expect(dockerHas(ref)).toBe(true);
    await page.screenshot({ path: 'test-results/operator-apps-installed-en.png', fullPage: true });
    expect(consoleErrors).toEqual([]);
  } finally {
    agent?.child.kill();
    removeContainersOf(installations);
    try {
      execFileSync('docker', ['rmi', '-f', ref], { stdio: 'ignore' });
    } catch {}
    rmSync(tmp, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test('the apps page in Chinese: list, hide and show, top pick, a refused field, the archive', async ({ page, request, consoleErrors }) => {
  needDocker('operator-apps');
  const stamp = Date.now().toString(36);
  const ref = `zmarket-e2e/publish-zh-${stamp}:1`;
  const tmp = mkdtempSync(join(os.tmpdir(), 'zmarket-publish-zh-'));
  try {
    const archive = archiveAs(ref, tmp);
    const op = `op-apps-zh-${stamp}@example.com`;
    await verifiedAccount(request, op);
    operatorGrant(op);
    await signIn(page, op, { lang: 'zh', redirect: '/operator/apps' });
    await page.goto('/operator/apps?language=zh');
    await expectHydrated(page);
    await expect(page.getByRole('heading', { name: '应用', level: 1 })).toBeVisible();

    // Hide grafana: the market no longer has it; show it again; make it a top pick.
    const row = page.locator('tr[data-app="grafana"]');
    await row.getByRole('button', { name: '隐藏' }).click();
    await expect(row.locator('.operator-status')).toContainText('已隐藏');
    expect((await request.get('/api/ebs/v1/market/applications/grafana')).status()).toBe(404);
    await row.getByRole('button', { name: '显示' }).click();
    await expect(row.locator('.operator-status')).not.toContainText('已隐藏');
    expect((await request.get('/api/ebs/v1/market/applications/grafana')).status()).toBe(200);
    await row.getByRole('button', { name: '设为精选' }).click();
    await expect(row.locator('.operator-status')).toContainText('精选');
    await page.screenshot({ path: 'test-results/operator-apps-list-zh.png', fullPage: true });
    await row.getByRole('button', { name: '取消精选' }).click();
    await expect(row.getByRole('button', { name: '设为精选' })).toBeVisible();

    // Only hidden ones.
    await page.getByLabel('显示', { exact: true }).selectOption('hidden');
    await expect(page.getByText('没有匹配的应用')).toBeVisible();
    await page.getByLabel('显示', { exact: true }).selectOption('all');

    // A new app with a bad image: the server's message, in Chinese, under the field.
    await page.getByRole('button', { name: '发布应用' }).click();
    await page.getByLabel('应用 ID').fill(`zh-${stamp}`);
    await page.getByLabel('名称（英文）').fill('Notes');
    await page.getByLabel('名称（中文）').fill('笔记');
    await page.getByLabel('简介（英文）').fill('Notes for all');
    await page.getByLabel('简介（中文）').fill('大家的笔记');
    await page.getByLabel('发布者').fill('Acme IT');
    await page.getByLabel('镜像', { exact: true }).fill('notes');
    await page.getByRole('button', { name: '发布', exact: true }).click();
    await expect(page.getByText('镜像须为带标签的引用，例如 registry.example.com/team/app:1.0')).toBeVisible();
    await page.getByLabel('镜像', { exact: true }).fill(ref);
    await page.getByRole('button', { name: '发布', exact: true }).click();
    await expect(page.getByRole('heading', { name: '编辑 笔记' })).toBeVisible();
    await page.locator('#app-archive-file').setInputFiles(archive);
    await expect(page.getByRole('status').filter({ hasText: '已保存' })).toContainText(ref, { timeout: 60_000 });
    await page.screenshot({ path: 'test-results/operator-apps-form-zh.png', fullPage: true });

    // The audit names what was done.
    await page.goto('/operator/audit?language=zh');
    await expect(page.locator('tr[data-action="app.image"]').first()).toContainText('上传应用镜像归档');
    await expect(page.locator('tr[data-action="app.create"]').first()).toContainText('发布应用');
    // The one refused request is the bad image above (the browser logs every 400).
    expect(consoleErrors.filter((e) => !e.includes('status of 400'))).toEqual([]);
    expect(consoleErrors.filter((e) => e.includes('status of 400'))).toHaveLength(1);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
