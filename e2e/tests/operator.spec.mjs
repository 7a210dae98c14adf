// The operator's console (issue 25) in both languages: `zmarket operator grant` against the running
// server's data directory makes an operator; the menu then has the operator's pages; they find a
// person, suspend them (their live session is refused, sign-in answers the reason), unsuspend them,
// grant them coins, and read it all in the audit.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test, expect, expectHydrated, apiSession, verifiedAccount, PASSWORD, signIn } from './fixtures.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

const T = {
  en: {
    menu: 'Operator', people: 'People', audit: 'Audit',
    search: 'Search', suspend: 'Suspend', unsuspend: 'Unsuspend', reason: 'Reason', suspended: 'Suspended', grant: 'Grant coins',
    coins: 'Coins', memo: 'Memo (optional)', reasonRequired: 'Please give a reason', granted: '12.50 coins granted to',
    actionSuspend: 'Suspended', actionGrant: 'Coins granted', actionUnsuspend: 'Unsuspended', refused: 'This account is suspended: Spam in the market',
  },
  zh: {
    menu: '运营', people: '用户', audit: '操作记录',
    search: '搜索', suspend: '停用', unsuspend: '恢复', reason: '原因', suspended: '已停用', grant: '发放币',
    coins: '币数', memo: '备注（可选）', reasonRequired: '请填写原因', granted: '发放 12.50 币',
    actionSuspend: '停用账户', actionGrant: '发放币', actionUnsuspend: '恢复账户', refused: '该账户已被停用：Spam in the market',
  },
};

function operatorGrant(email) {
  return execFileSync(BIN, ['operator', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', email], {
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
    encoding: 'utf8',
  });
}

for (const lang of ['en', 'zh']) {
  test(`operator: menu, people, suspend and unsuspend, grant, audit (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const stamp = `${lang}-${Date.now()}`;
    const op = `op-${stamp}@example.com`;
    const person = `person-${stamp}@example.com`;
    await verifiedAccount(request, op);
    await verifiedAccount(request, person);
    expect(operatorGrant(op)).toContain(`${op} is now an operator`);
    const theirs = await apiSession(request, person);
    expect((await request.get('/api/iam/v1/account/profile', { headers: theirs })).status()).toBe(200);

    await signIn(page, op, { lang });

    // The menu entry, its page, then the people.
    await page.getByRole('link', { name: t.menu, exact: true }).first().click();
    await expect(page).toHaveURL(/\/operator$/);
    await expect(page.getByRole('heading', { name: t.menu, level: 1 })).toBeVisible();
    await page.screenshot({ path: `test-results/operator-home-${lang}.png`, fullPage: true });
    await page.locator('main').getByRole('link', { name: t.people, exact: true }).click();
    await expect(page).toHaveURL(/\/operator\/people$/);
    await page.getByLabel(t.search, { exact: true }).fill(person);
    await page.getByRole('button', { name: t.search, exact: true }).click();
    const row = page.locator(`tr[data-email="${person}"]`);
    await expect(row).toBeVisible();
    await expect(page.locator('tbody tr')).toHaveCount(1);

    // Suspend: a reason is required (checked before anything is sent), then the row says so.
    await row.getByRole('button', { name: t.suspend, exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: t.suspend, exact: true }).click();
    await expect(dialog.getByText(t.reasonRequired)).toBeVisible();
    await dialog.getByLabel(t.reason, { exact: true }).fill('Spam in the market');
    await page.screenshot({ path: `test-results/operator-suspend-${lang}.png` });
    await dialog.getByRole('button', { name: t.suspend, exact: true }).click();
    await expect(dialog).toBeHidden();
    await expect(row.getByText(t.suspended, { exact: true })).toBeVisible();
    // Their live session is refused on its next call; sign-in answers the reason in their language.
    expect((await request.get('/api/iam/v1/account/profile', { headers: theirs })).status()).toBe(401);
    const refused = await request.post('/api/iam/v2/login/password', { headers: { 'accept-language': lang }, data: { email: person, password: PASSWORD } });
    expect(refused.status()).toBe(403);
    expect((await refused.json()).msg).toBe(t.refused);
    await page.screenshot({ path: `test-results/operator-people-${lang}.png`, fullPage: true });

    await row.getByRole('button', { name: t.unsuspend, exact: true }).click();
    await expect(row.getByRole('button', { name: t.suspend, exact: true })).toBeVisible();
    expect((await request.post('/api/iam/v2/login/password', { data: { email: person, password: PASSWORD } })).status()).toBe(200);

    // Grant 12.50 coins: the row's balance follows.
    await row.getByRole('button', { name: t.grant, exact: true }).click();
    const grant = page.getByRole('dialog');
    await grant.getByLabel(t.coins, { exact: true }).fill('12.50');
    await grant.getByLabel(t.memo, { exact: true }).fill('prize');
    await grant.getByRole('button', { name: t.grant, exact: true }).click();
    await expect(page.getByText(t.granted)).toBeVisible();
    await expect(row).toContainText('112.50');
    const wallet = await (await request.get('/api/billing/v1/wallet', { headers: await apiSession(request, person) })).json();
    expect(wallet.data.balance).toBe(11_250);

    // The audit, newest first.
    await page.goto(`/operator/audit`);
    await expectHydrated(page);
    const actions = page.locator('tbody tr');
    await expect(actions.first()).toHaveAttribute('data-action', 'user.grant');
    await expect(page.locator('tr[data-action="user.suspend"]').first()).toContainText(t.actionSuspend);
    await expect(page.locator('tr[data-action="user.unsuspend"]').first()).toContainText(t.actionUnsuspend);
    await expect(actions.first()).toContainText(op);
    await page.screenshot({ path: `test-results/operator-audit-${lang}.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  });

  test(`operator: a person who is not an operator has no operator pages (${lang})`, async ({ page, request, consoleErrors }) => {
    const email = `plain-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, email);
    const headers = await apiSession(request, email);
    expect((await request.get('/api/ops/v1/users', { headers })).status()).toBe(403);
    await signIn(page, email, { lang });
    await expect(page.getByRole('link', { name: T[lang].menu, exact: true })).toHaveCount(0);
    await page.goto('/operator/people');
    await expect(page.getByText(lang === 'en' ? /do not have access/ : /无权访问/)).toBeVisible();
    expect(consoleErrors).toEqual([]);
  });
}
