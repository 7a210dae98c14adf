// The links an account gets by mail: recovering an account (forgot password, resend verification),
// signing up from an invitation link without losing it, and then, a member, seeing what was
// allocated to them. English and Chinese, real binary, real Chromium, mail read from the server's
// outbox.
import { test, expect, expectHydrated, mailMatch, mailedLink, verifiedAccount, apiSession, PASSWORD, signIn, submitSignIn } from './fixtures.mjs';

const T = {
  en: {
    email: 'Email', password: 'Password', forgotLink: 'Forgot password?', forgot: 'Forgot password',
    send: 'Send the reset link', sentTitle: 'Check your email', newPassword: 'New password', confirm: 'Confirm password',
    setNew: 'Set the new password', changed: 'Password changed', resendLink: "Didn't get the verification email?",
    resend: 'Resend verification email', resent: 'a new link is on its way', signUp: 'Sign Up', create: 'Create Account',
    checkEmail: 'Check Your Email', verified: 'Email Verified', continue: 'Sign in and join the company', joinCompany: 'Join Company', accept: 'Accept and join',
    joined: 'You joined the company.', switchCompany: 'Switch company', allocated: 'Allocated to you', used: 'This password reset link has already been used, please ask for a new one',
  },
  zh: {
    email: '邮箱', password: '密码', forgotLink: '忘记密码？', forgot: '忘记密码',
    send: '发送重置链接', sentTitle: '请查收邮件', newPassword: '新密码', confirm: '确认密码',
    setNew: '设置新密码', changed: '密码已修改', resendLink: '没有收到验证邮件？',
    resend: '重新发送验证邮件', resent: '新的验证链接已经发出', signUp: '注册', create: '创建账户',
    checkEmail: '查收邮件', verified: '邮箱已验证', continue: '登录并加入企业', joinCompany: '加入企业', accept: '接受并加入',
    joined: '您已加入企业。', switchCompany: '切换企业', allocated: '分配给您的资源', used: '该密码重置链接已使用过，请重新获取',
  },
};

const path = (link) => link.replace(/^https?:\/\/[^/]+/, '');
const stamp = () => `${Date.now()}-${Math.floor(Math.random() * 1e4)}`;
const RESET = /https?:\/\/\S+\/reset-password\?token=([A-Za-z0-9_-]+)/;
const VERIFY = /https?:\/\/\S+\/email-verified\?token=([A-Za-z0-9_-]+)\S*/;

for (const lang of ['en', 'zh']) {
  test(`forgot password: a mailed link, once, and every session ends (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const email = `forgot-${lang}-${stamp()}@example.com`;
    await verifiedAccount(request, email);
    const old = await apiSession(request, email);

    await page.goto(`/auth/signin?language=${lang}`);
    await expectHydrated(page);
    await page.getByRole('link', { name: t.forgotLink }).click();
    await expect(page.getByRole('heading', { name: t.forgot })).toBeVisible();
    await page.screenshot({ path: `test-results/mailed-links-forgot-${lang}.png` });
    await page.locator('form').getByLabel(t.email, { exact: true }).fill(email);
    await page.getByRole('button', { name: t.send }).click();
    await expect(page.getByRole('heading', { name: t.sentTitle })).toBeVisible();
    await expect(page.locator('main')).toContainText(email);
    // An address without an account reads exactly the same.
    const nobody = `nobody-${lang}-${stamp()}@example.com`;
    const known = (await page.locator('main p').first().textContent()).replace(email, 'X');
    await page.goto(`/forgot-password?email=${encodeURIComponent(nobody)}&language=${lang}`);
    await page.getByRole('button', { name: t.send }).click();
    await expect(page.getByRole('heading', { name: t.sentTitle })).toBeVisible();
    expect((await page.locator('main p').first().textContent()).replace(nobody, 'X')).toBe(known);
    expect(mailMatch(nobody, /./)).toBeNull();

    const link = await mailedLink(email, RESET);
    await page.goto(`${path(link)}&language=${lang}`);
    await expectHydrated(page);
    await page.getByLabel(t.newPassword).fill('Renewed123');
    await page.getByLabel(t.confirm).fill('Renewed123');
    await page.screenshot({ path: `test-results/mailed-links-reset-${lang}.png` });
    await page.getByRole('button', { name: t.setNew }).click();
    await expect(page.getByRole('heading', { name: t.changed })).toBeVisible();
    await page.screenshot({ path: `test-results/mailed-links-reset-done-${lang}.png` });
    // The session from before the reset has ended.
    expect((await request.get('/api/iam/v1/account/profile', { headers: old })).status()).toBe(401);
    // The link works once.
    await page.goto(`${path(link)}&language=${lang}`);
    await page.getByLabel(t.newPassword).fill('Another123');
    await page.getByLabel(t.confirm).fill('Another123');
    await page.getByRole('button', { name: t.setNew }).click();
    await expect(page.getByRole('alert')).toHaveText(t.used);
    // The new password signs in.
    await signIn(page, email, { lang, password: 'Renewed123' });
    expect(consoleErrors.filter((e) => !/status of 409/.test(e))).toEqual([]);
  });

  test(`resend the verification email from sign-in and check-email (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const email = `resend-${lang}-${stamp()}@example.com`;
    const reg = await request.post('/api/iam/v1/register', { data: { email, password: PASSWORD, confirm_password: PASSWORD, agree: true } });
    expect(reg.status()).toBe(200);
    const first = (await mailedLink(email, VERIFY)).match(VERIFY)[1];

    await page.goto(`/auth/signin?language=${lang}`);
    await expectHydrated(page);
    await page.getByRole('link', { name: t.resendLink }).click();
    await expect(page.getByRole('heading', { name: t.checkEmail })).toBeVisible();
    await page.locator('form').getByLabel(t.email, { exact: true }).fill(email);
    await page.getByRole('button', { name: t.resend }).click();
    await expect(page.getByText(t.resent).first()).toBeVisible();
    await page.screenshot({ path: `test-results/mailed-links-resend-${lang}.png` });
    await expect.poll(() => mailMatch(email, VERIFY)?.[1]).not.toBe(first);
    const second = mailMatch(email, VERIFY)[1];
    // The new link verifies; then sign-in works.
    await page.goto(`/email-verified?token=${second}&language=${lang}`);
    await expect(page.getByRole('heading', { name: t.verified })).toBeVisible();
    expect((await request.post('/api/iam/v2/login/password', { data: { email, password: PASSWORD } })).status()).toBe(200);
    expect(consoleErrors).toEqual([]);
  });

  test(`signing up from an invitation lands on the joined company; the member sees the allocated device (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const s = stamp();
    const owner = `inv-owner-${lang}-${s}@example.com`;
    const newbie = `inv-newbie-${lang}-${s}@example.com`;
    const companyName = lang === 'en' ? `Invite Co ${s.slice(-5)}` : `邀请公司 ${s.slice(-5)}`;
    await verifiedAccount(request, owner);
    const personal = await apiSession(request, owner);
    const company = (await (await request.post('/api/iam/v1/sme', { headers: personal, data: { name: companyName } })).json()).data;
    const sw = (await (await request.post('/api/iam/v1/switch', { headers: personal, data: { smeId: company.id } })).json()).data;
    const admin = { authorization: `Bearer ${sw.token}` };
    expect((await request.post('/api/iam/v1/sme/invite', { headers: admin, data: { email: newbie } })).status()).toBe(200);
    const invitation = path(await mailedLink(newbie, /https?:\/\/\S+\/iam\/v1\/sme\/join\?code=[A-Za-z0-9_-]+/));

    // Signed out, on the invitation: "Sign Up" keeps the invitation.
    await page.goto(`${invitation}&language=${lang}`);
    await expectHydrated(page);
    await expect(page.getByRole('heading', { name: t.joinCompany })).toBeVisible();
    await page.getByRole('link', { name: t.signUp, exact: true }).click();
    await expect(page).toHaveURL(/\/auth\/signup\?redirect=/);
    const form = page.locator('form');
    await form.getByLabel(t.email, { exact: true }).fill(newbie);
    await form.getByLabel(t.password, { exact: true }).fill(PASSWORD);
    await form.getByLabel(t.confirm).fill(PASSWORD);
    await form.getByRole('checkbox').check();
    await form.getByRole('button', { name: t.create }).click();
    await expect(page.getByRole('heading', { name: t.checkEmail })).toBeVisible();
    await expect(page).toHaveURL(/redirect=/);

    // The verification mail carries it; verifying offers to sign in and join.
    const verify = await mailedLink(newbie, VERIFY);
    expect(decodeURIComponent(verify)).toContain(invitation);
    await page.goto(path(verify));
    await expect(page.getByRole('heading', { name: t.verified })).toBeVisible();
    await page.screenshot({ path: `test-results/mailed-links-invite-verified-${lang}.png` });
    await page.getByRole('link', { name: t.continue }).click();
    await expect(page.getByRole('heading', { name: t.joinCompany })).toBeVisible();
    await submitSignIn(page, newbie, { lang });
    await page.getByRole('button', { name: t.accept }).click();
    await expect(page.getByRole('heading', { name: t.joined })).toBeVisible();
    await page.screenshot({ path: `test-results/mailed-links-invite-joined-${lang}.png` });

    // The admin binds a device in the company and allocates it to the new member...
    const reg = await request.post('/api/agent/v1/register', {
      data: { type: 'Z-BOX', name: `Member box ${lang}`, spec: { cpu_cores: 4, memory_bytes: 2 ** 34, disk_bytes: 2 ** 39, gpus: [] } },
    });
    const { device_id, pairing_code } = (await reg.json()).data;
    expect((await request.post('/api/ebs/v2/devices/link', { headers: admin, data: { device_id, pairing_code } })).status()).toBe(200);
    const members = (await (await request.get('/api/iam/v1/sme/members', { headers: admin })).json()).data.items;
    const user_id = members.find((m) => m.email === newbie).user_id;
    const assign = await request.post('/api/ebs/v1/sme/resources/assign', { headers: admin, data: { user_id, resource_type: 'device', resource_id: device_id } });
    expect(assign.status(), await assign.text()).toBe(200);
    // ...who switches into the company and sees it on their Z-APP page.
    await page.goto(`/account?language=${lang}`);
    await page.getByRole('combobox', { name: t.switchCompany }).selectOption({ label: companyName });
    await expect(page.getByRole('combobox', { name: t.switchCompany }).locator('option:checked')).toHaveText(companyName);
    await page.goto('/app');
    const section = page.getByRole('region', { name: t.allocated });
    await expect(section.locator(`tr[data-device-id="${device_id}"]`)).toContainText(`Member box ${lang}`);
    await page.screenshot({ path: `test-results/mailed-links-member-app-${lang}.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
}
