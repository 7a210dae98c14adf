// The wallet page in both languages: a verified account (signup bonus), coins granted by the
// operator with `zmarket coins grant` against the running server's data directory, and a spend
// made through the API (a top-up of the person's company, with an Idempotency-Key, sent twice).
// The page must show the figures, the chart, the entries with their filters and the bills' tabs.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test, expect, apiSession, verifiedAccount, signIn } from './fixtures.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

const T = {
  en: {
    walletMenu: 'Wallet', title: 'Wallet',
    balance: 'Balance', held: 'Held', available: 'Available', runway: 'Runway', nothingRunning: 'Nothing running',
    chart: 'Income and expense, last 30 days', entries: 'Entries', all: 'All', income: 'Income', expense: 'Expense',
    bills: 'Bills', unbilled: 'This hour', billed: 'Closed', noUnbilled: 'Nothing charged this hour',
    noUnbilledHint: 'While a rental runs, what its meter charges is collected here', noBilled: 'No closed bills yet',
    grant: 'Operator grant', bonus: 'Signup bonus', topUp: 'Company top-up', show: 'Show',
    totals: 'Income 1,334.50 · Expense 30.00 · Charged this hour 0.00',
  },
  zh: {
    walletMenu: '钱包', title: '钱包',
    balance: '余额', held: '冻结', available: '可用', runway: '可用时长', nothingRunning: '没有运行中的租用',
    chart: '近 30 天收入与支出', entries: '收支明细', all: '全部', income: '收入', expense: '支出',
    bills: '账单', unbilled: '本小时', billed: '已结账', noUnbilled: '本小时没有扣费',
    noUnbilledHint: '租用运行时，计时扣除的费用汇总在这里', noBilled: '还没有已结账的账单',
    grant: '运营者发放', bonus: '注册奖励', topUp: '企业充值', show: '显示',
    totals: '收入 1,334.50 · 支出 30.00 · 本小时已扣费 0.00',
  },
};

/** `zmarket coins grant` against the data directory of the server the config started. */
function grantCoins(email, amount, memo) {
  return execFileSync(BIN, ['coins', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', email, '--amount', amount, '--memo', memo], {
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
    encoding: 'utf8',
  });
}

/** Signs in through the form in `lang`. */
/** Moves `cents` from the person's wallet into a company of theirs, through the API. */
async function spendThroughApi(request, email, cents) {
  const personal = await apiSession(request, email);
  const created = await request.post('/api/iam/v1/sme', { headers: personal, data: { name: `Wallet Co ${Date.now() % 100000}` } });
  expect(created.status()).toBe(200);
  const sme = (await created.json()).data.id;
  const switched = await request.post('/api/iam/v1/switch', { headers: personal, data: { smeId: sme } });
  expect(switched.status()).toBe(200);
  const admin = { authorization: `Bearer ${(await switched.json()).data.token}` };
  const key = `e2e-fund-${Date.now()}`;
  const body = { amount: cents, memo: 'GPU time for the team' };
  const first = await request.post('/api/billing/v1/wallet/fund', { headers: { ...admin, 'idempotency-key': key }, data: body });
  expect(first.status(), await first.text()).toBe(200);
  // A retry with the same key answers the same entry and moves nothing.
  const again = await request.post('/api/billing/v1/wallet/fund', { headers: { ...admin, 'idempotency-key': key }, data: body });
  expect(again.headers()['idempotent-replayed']).toBe('true');
  expect((await again.json()).data.id).toBe((await first.json()).data.id);
}

for (const lang of ['en', 'zh']) {
  test(`wallet: figures, chart, entries and bills after a grant and a spend (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const email = `wallet-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, email); // the signup bonus: 100.00
    const out = grantCoins(email, '1234.50', 'Welcome to the pilot');
    expect(out).toContain(`granted 1,234.50 coins to ${email}; balance: 1,334.50 coins`);
    await spendThroughApi(request, email, 3000);

    await signIn(page, email, { lang });
    await page.locator('nav.side-menu .menu-item', { hasText: t.walletMenu }).first().click();
    await expect(page).toHaveURL(/\/wallet$/);
    await expect(page.getByRole('heading', { name: t.title, level: 1 })).toBeVisible();

    // Figures: 100.00 + 1,234.50 - 30.00, nothing held, nothing running.
    await expect(page.locator('[data-figure="balance"] .figure-value')).toHaveText('1,304.50');
    await expect(page.locator('[data-figure="held"] .figure-value')).toHaveText('0.00');
    await expect(page.locator('[data-figure="available"] .figure-value')).toHaveText('1,304.50');
    await expect(page.locator('[data-figure="runway"] .figure-value')).toHaveText(t.nothingRunning);
    for (const label of [t.balance, t.held, t.available, t.runway]) {
      await expect(page.locator('.wallet-figures dt').getByText(label, { exact: true })).toBeVisible();
    }
    await expect(page.getByText(t.totals)).toBeVisible();

    // The chart: today's bars, labelled with the totals.
    await expect(page.getByRole('heading', { name: t.chart })).toBeVisible();
    const chart = page.getByRole('img', { name: new RegExp('1,334.50') });
    await expect(chart).toBeVisible();
    await expect(chart.locator('rect.income')).toHaveCount(1);
    await expect(chart.locator('rect.expense')).toHaveCount(1);

    // Entries, newest first, then the filters.
    const entries = page.locator('section[aria-labelledby="wallet-entries-title"]');
    const rows = entries.locator('tbody tr');
    await expect(rows).toHaveCount(3);
    await expect(rows.nth(0)).toContainText(t.topUp);
    await expect(rows.nth(0)).toContainText('-30.00');
    await expect(rows.nth(0)).toContainText('1,304.50');
    await expect(rows.nth(1)).toContainText(t.grant);
    await expect(rows.nth(1)).toContainText('+1,234.50');
    await expect(rows.nth(1)).toContainText('Welcome to the pilot');
    await expect(rows.nth(2)).toContainText(t.bonus);
    await expect(rows.nth(2)).toContainText('+100.00');
    // System entries carry no memo of their own (the type column names them in the reader's language).
    await expect(rows.nth(2).locator('td').nth(2)).toHaveText('-');
    await page.screenshot({ path: `test-results/wallet-${lang}.png`, fullPage: true });

    const filters = entries.getByRole('group', { name: t.show });
    await filters.getByRole('button', { name: t.income, exact: true }).click();
    await expect(page).toHaveURL(/kind=income/);
    await expect(rows).toHaveCount(2);
    await expect(entries.locator('tbody tr[data-entry-kind="expense"]')).toHaveCount(0);
    await filters.getByRole('button', { name: t.expense, exact: true }).click();
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText('-30.00');
    await filters.getByRole('button', { name: t.all, exact: true }).click();
    await expect(rows).toHaveCount(3);

    // Bills: nothing metered yet; each tab explains what will appear.
    const bills = page.locator('section[aria-labelledby="wallet-bills-title"]');
    await expect(bills.getByRole('tab', { name: t.unbilled, exact: true })).toHaveAttribute('aria-selected', 'true');
    await expect(bills.getByRole('heading', { name: t.noUnbilled })).toBeVisible();
    await expect(bills.getByText(t.noUnbilledHint)).toBeVisible();
    await bills.getByRole('tab', { name: t.billed, exact: true }).click();
    await expect(page).toHaveURL(/bills=billed/);
    await expect(bills.getByRole('heading', { name: t.noBilled })).toBeVisible();
    await page.screenshot({ path: `test-results/wallet-${lang}-filtered.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
}

test('wallet: a new account sees how coins get spent', async ({ page, request, consoleErrors }) => {
  const email = `wallet-empty-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  // Only the signup bonus so far: the expense filter explains how coins get spent.
  await signIn(page, email);
  await page.goto('/wallet?kind=expense');
  await expect(page.getByRole('heading', { name: 'No expenses yet' })).toBeVisible();
  await expect(page.getByText('Renting apps and placing orders spends coins')).toBeVisible();
  await expect(page.locator('[data-figure="balance"] .figure-value')).toHaveText('100.00');
  expect(consoleErrors).toEqual([]);
});

/** `zmarket coins codes` against the server's data directory: the printed codes. */
function printCodes(amount, count) {
  const out = execFileSync(BIN, ['coins', 'codes', '--data-dir', process.env.E2E_DATA_DIR, '--amount', amount, '--count', String(count)], {
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
    encoding: 'utf8',
  });
  return out.trim().split('\n');
}

const TOPUP = {
  en: { getCoins: 'Get coins', code: 'Top-up code', redeem: 'Redeem', used: 'This top-up code has already been used', redeemed: 'Top-up code redeemed', what: 'What', csv: 'Download CSV', header: 'Time (UTC),Kind,What,Memo' },
  zh: { getCoins: '获取币', code: '充值码', redeem: '兑换', used: '该充值码已被使用', redeemed: '兑换充值码', what: '项目', csv: '导出表格', header: '时间 (UTC),类型,项目,备注' },
};

for (const lang of ['en', 'zh']) {
  test(`wallet: the top-up page redeems a code once, and the CSV keeps Chinese intact (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = { ...T[lang], ...TOPUP[lang] };
    const email = `topup-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, email);
    grantCoins(email, '1.00', '给团队的测试币');
    const [code] = printCodes('25', 1);
    expect(code).toMatch(/^ZM-[2-9A-Z]{4}-[2-9A-Z]{4}-[2-9A-Z]{4}-[2-9A-Z]{4}$/);

    await signIn(page, email, { lang });
    await page.goto('/wallet');
    await page.getByRole('link', { name: t.getCoins }).click();
    await expect(page).toHaveURL(/\/wallet\/top-up$/);
    await expect(page.locator('.topup-how')).not.toBeEmpty();
    await page.getByLabel(t.code, { exact: true }).fill(code.toLowerCase());
    await page.getByRole('button', { name: t.redeem }).click();
    // 100.00 bonus + 1.00 granted + 25.00 redeemed.
    await expect(page.locator('.topup-balance')).toHaveAttribute('data-available', '12600');
    await page.screenshot({ path: `test-results/wallet-topup-${lang}.png`, fullPage: true });
    // The same code again: refused in the reader's language, nothing moves.
    await page.getByLabel(t.code, { exact: true }).fill(code);
    await page.getByRole('button', { name: t.redeem }).click();
    await expect(page.getByText(t.used)).toBeVisible();
    await expect(page.locator('.topup-balance')).toHaveAttribute('data-available', '12600');

    await page.goto('/wallet');
    const entries = page.locator('section[aria-labelledby="wallet-entries-title"]');
    await expect(entries.locator('tbody tr').first()).toContainText(t.redeemed);
    await expect(entries.locator('tbody tr').first()).toContainText('+25.00');
    const [download] = await Promise.all([page.waitForEvent('download'), entries.getByRole('button', { name: t.csv }).click()]);
    const bytes = readFileSync(await download.path());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder('utf-8').decode(bytes.subarray(3));
    expect(text.split('\r\n')[0].startsWith(t.header) || text.split('\n')[0].startsWith(t.header)).toBe(true);
    expect(text).toContain('给团队的测试币');
    expect(text).toContain(t.redeemed);
    // The second redeem of the same code is answered 409 on purpose (shown above as "used");
    // the browser logs that answer. Nothing else may be logged.
    expect(consoleErrors.filter((e) => !e.includes('status of 409'))).toEqual([]);
    expect(consoleErrors.length).toBeLessThanOrEqual(1);
  });
}
