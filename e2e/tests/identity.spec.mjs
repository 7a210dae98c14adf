// Sign-up → mail file → verify → sign-in → change username → change password → sign-out,
// in English and in Chinese, through the real UI and the real binary.
import { test, expect, expectHydrated, mailedLink, signIn, submitSignIn } from './fixtures.mjs';

const T = {
  en: {
    email: 'Email', username: 'Username (optional)', password: 'Password', confirm: 'Confirm password',
    create: 'Create Account', checkEmail: 'Check Your Email', verified: 'Email Verified',
    usernameLabel: 'Username', save: 'Save', usernameChanged: 'Username changed', current: 'Current password',
    newPassword: 'New password', userMenu: 'User menu', signOut: 'Sign Out', emailRequired: 'Email Required',
    mismatch: "Password doesn't match",
  },
  zh: {
    email: '邮箱', username: '用户名（可选）', password: '密码', confirm: '确认密码',
    create: '创建账户', checkEmail: '查收邮件', verified: '邮箱已验证',
    usernameLabel: '用户名', save: '保存', usernameChanged: '用户名已修改', current: '当前密码',
    newPassword: '新密码', userMenu: '用户菜单', signOut: '退出登录', emailRequired: '请输入邮箱',
    mismatch: '两次输入的密码不一致',
  },
};

for (const lang of ['en', 'zh']) {
  test(`account life cycle in ${lang}`, async ({ page, consoleErrors }) => {
    const t = T[lang];
    const email = `e2e-${lang}-${Date.now()}@example.com`;
    const form = page.locator('form');

    await page.goto(`/auth/signup?language=${lang}`);
    await expectHydrated(page);
    await expect(page.locator('html')).toHaveAttribute('lang', lang);

    // Client-side validation messages of docs/product.md §5.
    await form.getByRole('button', { name: t.create }).click();
    await expect(page.getByText(t.emailRequired).first()).toBeVisible();
    await form.getByLabel(t.email, { exact: true }).fill(email);
    await form.getByLabel(t.username).fill(`Tester ${lang}`);
    await form.getByLabel(t.password, { exact: true }).fill('Secret123');
    await form.getByLabel(t.confirm).fill('Secret124');
    await form.getByRole('checkbox').check();
    await form.getByRole('button', { name: t.create }).click();
    await expect(page.getByText(t.mismatch).first()).toBeVisible();
    await form.getByLabel(t.confirm).fill('Secret123');
    await form.getByRole('button', { name: t.create }).click();

    await expect(page).toHaveURL(/\/check-email/);
    await expect(page.getByRole('heading', { name: t.checkEmail })).toBeVisible();

    // The server wrote the verification mail into <data-dir>/mail/.
    const link = await mailedLink(email, /https?:\/\/\S+email-verified\?token=\S+/);
    await page.goto(link.replace(/^https?:\/\/[^/]+/, '') + `&language=${lang}`);
    await expect(page.getByRole('heading', { name: t.verified })).toBeVisible();

    await signIn(page, email, { lang, password: 'Secret123' });
    await expect(page.getByRole('button', { name: t.userMenu })).toContainText(`Tester ${lang}`);

    await page.goto('/account/username');
    await page.locator('form').getByLabel(t.usernameLabel).fill(`Renamed ${lang}`);
    await page.locator('form').getByRole('button', { name: t.save }).click();
    await expect(page.getByText(t.usernameChanged).first()).toBeVisible();
    await expect(page.getByRole('button', { name: t.userMenu })).toContainText(`Renamed ${lang}`);

    await page.goto('/account/password');
    await page.locator('form').getByLabel(t.current).fill('Secret123');
    await page.locator('form').getByLabel(t.newPassword).fill('Secret456');
    await page.locator('form').getByLabel(t.confirm).fill('Secret456');
    await page.locator('form').getByRole('button', { name: t.save }).click();
    await expect(page).toHaveURL(/\/auth\/signin/);

    // The new password signs in; then sign out from the user menu.
    await submitSignIn(page, email, { lang, password: 'Secret456' });
    await expect(page).not.toHaveURL(/\/auth\/signin/);
    await page.getByRole('button', { name: t.userMenu }).click();
    await page.getByRole('button', { name: t.signOut }).click();
    await expect(page).toHaveURL(/\/auth\/signin/);
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBeFalsy();
    // A signed-in page now sends us back to sign-in.
    await page.goto('/account');
    await expect(page).toHaveURL(/\/auth\/signin/);

    expect(consoleErrors.filter((e) => !e.includes('Failed to load resource'))).toEqual([]);
  });
}
