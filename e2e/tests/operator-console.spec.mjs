// The operator's console in both languages: the overview's figures and fee chart; top-up codes
// issued (shown once), redeemed by another person on their wallet's top-up page, then listed as
// redeemed by them; the settings changed (a bad link refused under its field, in the page's
// language), kept, and the download page showing the new link. Then an app form made stale by an
// archive uploaded elsewhere reloads saying why, the audit says what was done in sentences, and
// "Back up now" on the overview takes a backup by hand.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test, expect, expectHydrated, verifiedAccount, apiSession, signIn, ok, stamp } from './fixtures.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

const T = {
  en: {
    menu: 'Operator', overview: 'Overview', people: 'People', codes: 'Top-up codes', settings: 'Settings',
    amount: 'Coins each', count: 'How many', issue: 'Issue codes', issued: '2 codes issued', done: 'Done',
    state: 'Status', redeemed: 'Redeemed', code: 'Top-up code', redeem: 'Redeem',
    fee: 'Market fee (%)', save: 'Save settings', saved: 'Settings saved', badLink: 'A download link must be empty or an http(s) address',
    chart: 'Fee income, last 30 days', backup: 'Last backup',
    granted: 'Granted 200.00 coins', backUpNow: 'Back up now', byHand: 'by hand', edit: 'Edit', saveApp: 'Save', summary: 'Summary (English)', version: 'Version', image: 'Image', appSaved: 'is saved',
    stale: 'This app changed since you opened the form (an upload or another edit): it has been reloaded, check it and save again',
  },
  zh: {
    menu: '运营', overview: '概览', people: '用户', codes: '充值码', settings: '设置',
    amount: '每个的币数', count: '数量', issue: '发放充值码', issued: '已发放 2 个充值码', done: '完成',
    state: '状态', redeemed: '已兑换', code: '充值码', redeem: '兑换',
    fee: '市场费率（%）', save: '保存设置', saved: '设置已保存', badLink: '下载链接须为空，或不超过 500 个字符的 http(s) 地址',
    chart: '近 30 天手续费收入', backup: '最近备份',
    granted: '发放 200.00 币', backUpNow: '立即备份', byHand: '手动', edit: '编辑', saveApp: '保存', summary: '简介（英文）', version: '版本', image: '镜像', appSaved: '已保存',
    stale: '打开表单后此应用已有改动（上传或其他编辑）：已重新载入，请检查后再保存',
  },
};

function operatorGrant(email) {
  return execFileSync(BIN, ['operator', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', email], {
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
    encoding: 'utf8',
  });
}

/** A minimal `docker save` archive naming `tags` (a manifest.json and a layer). */
function dockerSave(tags) {
  const blocks = [];
  const entry = (name, data) => {
    const h = Buffer.alloc(512);
    h.write(name, 0);
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write('0', 156);
    h.write('ustar\0', 257);
    h.write('00', 263);
    h.write('        ', 148);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  };
  entry('layer.tar', Buffer.alloc(3000, 7));
  entry('manifest.json', Buffer.from(JSON.stringify([{ Config: 'config.json', RepoTags: tags, Layers: ['layer.tar'] }])));
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

// The settings are one per market: the two languages' tests must not interleave their changes.
test.describe.configure({ mode: 'serial' });

for (const lang of ['en', 'zh']) {
  test(`operator console: overview, codes issued and redeemed, settings (${lang})`, async ({ page, browser, request, consoleErrors }) => {
    const t = T[lang];
    const stamp = `${lang}-${Date.now()}`;
    const op = `op-${stamp}@example.com`;
    const person = `redeemer-${stamp}@example.com`;
    await verifiedAccount(request, op);
    await verifiedAccount(request, person);
    expect(operatorGrant(op)).toContain(`${op} is now an operator`);
    await signIn(page, op, { lang });

    // The overview: its figures, the fee chart, the last backup line.
    await page.goto(`/operator?language=${lang}`);
    await expect(page.getByRole('heading', { name: t.overview })).toBeVisible();
    await expect(page.locator('[data-figure="people"] .figure-value')).not.toHaveText('0');
    await expect(page.getByRole('heading', { name: t.chart })).toBeVisible();
    await expect(page.locator('.wallet-chart svg')).toBeVisible();
    await expect(page.getByText(t.backup, { exact: false })).toBeVisible();
    await page.screenshot({ path: `test-results/operator-overview-${lang}.png`, fullPage: true });

    // Codes: two of 5 coins, shown once.
    await page.locator('main').getByRole('link', { name: t.codes, exact: true }).click();
    await expect(page).toHaveURL(/\/operator\/codes$/);
    await page.getByLabel(t.amount, { exact: true }).fill('5');
    await page.getByLabel(t.count, { exact: true }).fill('2');
    await page.getByRole('button', { name: t.issue, exact: true }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByRole('heading', { name: t.issued })).toBeVisible();
    const codes = (await dialog.getByTestId('issued-codes').innerText()).trim().split('\n');
    expect(codes).toHaveLength(2);
    expect(codes[0]).toMatch(/^ZM-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    await page.screenshot({ path: `test-results/operator-codes-issued-${lang}.png` });
    await dialog.getByRole('button', { name: t.done, exact: true }).click();
    const row = page.locator(`tr[data-hint="${codes[0].slice(-4)}"]`);
    await expect(row).toHaveAttribute('data-state', 'unused');

    // Another person redeems the first on their wallet's top-up page.
    const other = await browser.newContext({ baseURL: new URL(page.url()).origin });
    const theirs = await other.newPage();
    await signIn(theirs, person, { lang });
    await theirs.goto(`/wallet/top-up?language=${lang}`);
    await theirs.waitForFunction(() => window.__zmHydrated === true);
    await theirs.getByLabel(t.code, { exact: true }).fill(codes[0].toLowerCase());
    await theirs.getByRole('button', { name: t.redeem, exact: true }).click();
    await expect(theirs.getByText('5.00').first()).toBeVisible();
    await other.close();

    // The list, narrowed to redeemed codes, names them.
    await page.getByLabel(t.state, { exact: true }).selectOption('redeemed');
    await expect(row).toHaveAttribute('data-state', 'redeemed');
    await expect(row).toContainText(person);
    await expect(row).toContainText(t.redeemed);
    await page.screenshot({ path: `test-results/operator-codes-${lang}.png`, fullPage: true });

    // Settings: a bad link is refused under its field; then a fee and a link are kept.
    await page.goto(`/operator/settings?language=${lang}`);
    await page.getByLabel('Windows', { exact: true }).fill('ftp://example.com/zmarket.exe');
    await page.getByRole('button', { name: t.save, exact: true }).click();
    await expect(page.getByText(t.badLink, { exact: false })).toBeVisible();
    await page.screenshot({ path: `test-results/operator-settings-error-${lang}.png`, fullPage: true });
    const link = `https://example.com/zmarket-${stamp}.exe`;
    await page.getByLabel('Windows', { exact: true }).fill(link);
    await page.getByLabel(t.fee, { exact: true }).fill(lang === 'en' ? '15' : '12');
    await page.getByRole('button', { name: t.save, exact: true }).click();
    await expect(page.getByText(t.saved, { exact: false })).toBeVisible();
    await page.reload();
    await page.waitForFunction(() => window.__zmHydrated === true);
    await expect(page.getByLabel(t.fee, { exact: true })).toHaveValue(lang === 'en' ? '15' : '12');
    await expect(page.getByLabel('Windows', { exact: true })).toHaveValue(link);
    const download = await request.get('/api/ebs/v1/download/links');
    expect((await download.json()).data.windows).toBe(link);
    await page.goto(`/m/download?language=${lang}`);
    await expect(page.locator(`a[href="${link}"]`).first()).toBeAttached();
    // The refused link's answer (400) is the only failed request.
    expect(consoleErrors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    expect(consoleErrors.length).toBeLessThanOrEqual(1);
  });
}

for (const lang of ['en', 'zh']) {
  const t = T[lang];

  test(`an app form made stale by an upload reloads saying why (${lang})`, async ({ page, request, consoleErrors }) => {
    const s = stamp();
    const op = `op3-${lang}-${s}@example.com`;
    await verifiedAccount(request, op);
    operatorGrant(op);
    const auth = await apiSession(request, op);
    const id = `wiki3-${lang}-${s}`;
    await ok(await request.post('/api/ops/v1/apps', {
      headers: auth,
      data: {
        id, name_en: `Wiki ${s}`, name_zh: `维基 ${s}`, summary_en: 'Our wiki', summary_zh: '我们的维基',
        category: 'Work', display_type: 'Server', tier: 'basic', kind: 'own', publisher: 'Acme IT', version: '1.0',
        requirements: { cpu_cores: 1, memory_bytes: 268435456, disk_bytes: 1073741824, gpu_count: 0 },
        image: 'zmarket-test/httpd:1', ports: [{ container: 80, web: true, name: 'web' }],
      },
    }));

    await signIn(page, op, { lang, redirect: '/operator/apps' });
    await page.goto(`/operator/apps?language=${lang}`);
    await expectHydrated(page);
    await page.locator(`tr[data-app="${id}"]`).getByRole('button', { name: t.edit }).click();
    // The form has its own address: a reload opens it again (item 11).
    await expect(page).toHaveURL(new RegExp(`edit=${id}`));
    await page.reload();
    await expectHydrated(page);
    const version = page.getByLabel(t.version, { exact: true });
    await expect(version).toHaveValue('1.0');

    // Another tab uploads an archive of another image: the app moves to it and to 1.0+r1.
    const image = `acme/wiki-${s}:2`;
    const up = await ok(await request.post(`/api/ops/v1/apps/${id}/image`, {
      headers: auth,
      multipart: { file: { name: 'image.tar', mimeType: 'application/x-tar', buffer: dockerSave([image]) } },
    }));
    expect(up.image).toBe(image);

    // This form still shows 1.0: saving it is refused, and it reloads with what the app is now.
    await page.getByLabel(t.summary, { exact: true }).fill('A stale summary');
    await page.getByRole('button', { name: t.saveApp, exact: true }).click();
    await expect(page.getByRole('alert').filter({ hasText: t.stale })).toBeVisible();
    await expect(version).toHaveValue('1.0+r1');
    await expect(page.getByLabel(t.image, { exact: true })).toHaveValue(image);
    await expect(page.getByLabel(t.summary, { exact: true })).toHaveValue('Our wiki');
    await page.screenshot({ path: `test-results/operator-console-stale-form-${lang}.png`, fullPage: true });
    const after = await ok(await request.get(`/api/ops/v1/apps/${id}`, { headers: auth }));
    expect([after.image, after.version, after.summary_en]).toEqual([image, '1.0+r1', 'Our wiki']);

    // Saved again from the reloaded form: it applies, and keeps the uploaded image.
    await page.getByLabel(t.summary, { exact: true }).fill('A fresh summary');
    await page.getByRole('button', { name: t.saveApp, exact: true }).click();
    await expect(page.getByText(lang === 'zh' ? `维基 ${s} ${t.appSaved}` : `Wiki ${s} ${t.appSaved}`)).toBeVisible();
    const saved = await ok(await request.get(`/api/ops/v1/apps/${id}`, { headers: auth }));
    expect([saved.image, saved.version, saved.summary_en]).toEqual([image, '1.0+r1', 'A fresh summary']);

    // The audit says what was done in sentences, amounts in coins (200 coins, not 20000 cents).
    const self = (await ok(await request.get(`/api/ops/v1/users?q=${encodeURIComponent(op)}`, { headers: auth }))).items[0];
    await ok(await request.post(`/api/ops/v1/users/${self.id}/grant`, { headers: auth, data: { amount: 20000, memo: 'welcome' } }));
    await page.goto(`/operator/audit?language=${lang}`);
    await expectHydrated(page);
    const grant = page.locator('tr[data-action="user.grant"]').first();
    await expect(grant).toContainText(t.granted);
    await expect(grant).not.toContainText('20000');
    await expect(page.locator('tr[data-action="app.image"]').first()).toContainText(image);
    await expect(page.locator('tr[data-action="app.update"]').first()).toContainText('summary_en: Our wiki → A fresh summary');
    // The action's name stays on one line.
    const lines = await grant.locator('td.audit-action').evaluate((td) => {
      const range = document.createRange();
      range.selectNodeContents(td);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    });
    expect(lines).toBe(1);
    await page.screenshot({ path: `test-results/operator-console-audit-${lang}.png`, fullPage: true });

    // Back up now, from the overview: the last backup is it, taken by hand.
    await page.goto(`/operator?language=${lang}`);
    await expectHydrated(page);
    await page.getByRole('button', { name: t.backUpNow }).click();
    await expect(page.locator('[data-backup="manual"]')).toContainText(t.byHand);
    await page.screenshot({ path: `test-results/operator-console-backup-${lang}.png`, fullPage: true });
    expect(consoleErrors.filter((e) => !e.includes('409'))).toEqual([]);
  });
}
