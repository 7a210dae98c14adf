// Personal API keys on /account: create one (name, expiry), see it once with a copy button and the
// warning, copy it, use it as a Bearer credential, see its use in the list, revoke it after a
// confirmation (then it is refused). In English and in Chinese.
import { test, expect, expectHydrated, verifiedAccount, signIn } from './fixtures.mjs';

const T = {
  en: {
    section: 'API keys', name: 'Key name', expiry: 'Expires',
    in30: 'In 30 days', create: 'Create key', required: 'Please name the key', newTitle: 'Your new API key',
    warning: 'it will not be shown again', copy: 'Copy', copied: 'Key copied', done: 'I have copied it', never: 'Never',
    revoke: 'Revoke', revokeTitle: 'Revoke API key', revoked: 'Key revoked', none: 'No API keys yet', actsIn: 'Acts in',
    keyName: 'deploy script', scopes: 'Read · Apps',
  },
  zh: {
    section: 'API 密钥', name: '密钥名称', expiry: '过期时间',
    in30: '30 天后', create: '创建密钥', required: '请输入密钥名称', newTitle: '您的新 API 密钥',
    warning: '它不会再次显示', copy: '复制', copied: '密钥已复制', done: '我已复制', never: '从未使用',
    revoke: '撤销', revokeTitle: '撤销 API 密钥', revoked: '密钥已撤销', none: '还没有 API 密钥', actsIn: '所属账户',
    keyName: '部署脚本', scopes: '读取 · 应用',
  },
};

for (const lang of ['en', 'zh']) {
  test(`create an API key on /account, see it once, use it, revoke it (${lang})`, async ({ page, context, request, consoleErrors }) => {
    const t = T[lang];
    const email = `keys-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, email);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);

    await signIn(page, email, { lang });

    await page.goto(`/account?language=${lang}`);
    await expectHydrated(page);
    const section = page.locator('section', { has: page.getByRole('heading', { name: t.section, level: 2 }) });
    await expect(section.getByText(t.none)).toBeVisible();

    // A name is required (checked before anything is sent).
    await section.getByRole('button', { name: t.create }).click();
    await expect(section.getByText(t.required)).toBeVisible();

    await section.getByLabel(t.name, { exact: true }).fill(t.keyName);
    await section.getByLabel(t.expiry, { exact: true }).selectOption({ label: t.in30 });
    await section.getByRole('button', { name: t.create }).click();

    // The new key, once, with the warning and a copy button.
    const dialog = page.getByRole('dialog', { name: t.newTitle });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText(t.warning);
    const key = (await dialog.locator('code').textContent()) ?? '';
    expect(key).toMatch(/^zk_[A-Za-z0-9_-]{43}$/);
    await dialog.getByRole('button', { name: t.copy, exact: true }).click();
    await expect(page.getByText(t.copied)).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await page.screenshot({ path: `test-results/api-keys-new-${lang}.png` });
    await dialog.getByRole('button', { name: t.done }).click();
    await expect(dialog).toBeHidden();
    // Gone from the page for good: the list shows its prefix only.
    expect(await page.content()).not.toContain(key);
    const row = section.locator('tr', { hasText: t.keyName });
    await expect(row).toContainText(`${key.slice(0, 9)}…`);
    // Every key acts in the personal context here: the context column is left out.
    expect(await section.locator('th').allTextContents()).not.toContain(t.actsIn);
    // What it may do: the default scopes, named.
    await expect(row.locator('td').nth(2)).toHaveText(t.scopes);
    await expect(row.locator('td').nth(4)).toHaveText(t.never);

    // The key works as a Bearer credential; the list then shows its use.
    const used = await request.get('/api/iam/v1/account/profile', { headers: { authorization: `Bearer ${key}` } });
    expect(used.status()).toBe(200);
    expect((await used.json()).data.email).toBe(email);
    await page.reload();
    await expectHydrated(page);
    await expect(row.locator('td').nth(4)).toHaveText(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    await expect(row.locator('td').nth(5)).toHaveText(/^\d{4}-\d{2}-\d{2}$/);
    await page.screenshot({ path: `test-results/api-keys-list-${lang}.png`, fullPage: true });

    // Revoked after a confirmation: gone from the list and refused.
    await row.getByRole('button', { name: `${t.revoke} ${t.keyName}`, exact: true }).click();
    const confirm = page.getByRole('dialog', { name: t.revokeTitle });
    await expect(confirm).toContainText(t.keyName);
    await confirm.getByRole('button', { name: t.revoke, exact: true }).click();
    await expect(page.getByText(t.revoked)).toBeVisible();
    await expect(section.getByText(t.none)).toBeVisible();
    const refused = await request.get('/api/iam/v1/account/profile', { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status()).toBe(401);

    expect(consoleErrors).toEqual([]);
  });
}
