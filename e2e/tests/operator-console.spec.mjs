// The operator's console, round two (issue 25 items 2, 5, 6), in both languages: the overview's
// figures and fee chart; top-up codes issued (shown once), redeemed by another person on their
// wallet's top-up page, then listed as redeemed by them; the settings changed (a bad link refused
// under its field, in the page's language), kept, and the download page showing the new link.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test, expect, verifiedAccount, signIn } from './fixtures.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

const T = {
  en: {
    menu: 'Operator', overview: 'Overview', people: 'People', codes: 'Top-up codes', settings: 'Settings',
    amount: 'Coins each', count: 'How many', issue: 'Issue codes', issued: '2 codes issued', done: 'Done',
    state: 'Status', redeemed: 'Redeemed', code: 'Top-up code', redeem: 'Redeem',
    fee: 'Market fee (%)', save: 'Save settings', saved: 'Settings saved', badLink: 'A download link must be empty or an http(s) address',
    chart: 'Fee income, last 30 days', backup: 'Last backup',
  },
  zh: {
    menu: '运营', overview: '概览', people: '用户', codes: '充值码', settings: '设置',
    amount: '每个的币数', count: '数量', issue: '发放充值码', issued: '已发放 2 个充值码', done: '完成',
    state: '状态', redeemed: '已兑换', code: '充值码', redeem: '兑换',
    fee: '市场费率（%）', save: '保存设置', saved: '设置已保存', badLink: '下载链接须为空，或不超过 500 个字符的 http(s) 地址',
    chart: '近 30 天手续费收入', backup: '最近备份',
  },
};

function operatorGrant(email) {
  return execFileSync(BIN, ['operator', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', email], {
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
    encoding: 'utf8',
  });
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
