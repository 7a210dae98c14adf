// A creates a company, invites B; B opens the mailed link (signed out: signs in on the page) and
// joins; A binds a device to the company and allocates it to B; B switches into the company, sees
// only the member menu and only that device.
// In English and in Chinese, through the real UI and the real binary. Then the company's wallet on
// the company page: an admin funds it from their own wallet (the signup bonus).
import { test, expect, expectHydrated, mailedLink, verifiedAccount, apiSession, signIn, submitSignIn } from './fixtures.mjs';

const T = {
  en: {
    email: 'Email', switchCompany: 'Switch company', companies: 'Companies',
    companyName: 'Company name', create: 'Create', companyMenu: 'Company', appMenu: 'Z-APP', accountMenu: 'Account',
    invite: 'Invite', invited: 'Invitation sent', joinCompany: 'Join Company', accept: 'Accept and join', joined: 'You joined the company.',
    allocate: 'Allocate Resources', member: 'Member', resourceType: 'Resource type', resource: 'Resource',
    assign: 'Assign', assigned: 'Assigned', waitingAccepted: 'Accepted', history: 'Company History',
    allocatedTo: 'Allocated to', switchTo: (name) => `Switch to ${name}`, deviceId: 'Device ID',
    pairingCode: 'Pairing code', bind: 'Bind', bound: 'Device bound', devicesMenu: 'Devices',
  },
  zh: {
    email: '邮箱', switchCompany: '切换企业', companies: '企业',
    companyName: '企业名称', create: '创建', companyMenu: '企业', appMenu: 'Z-APP', accountMenu: '账户',
    invite: '邀请', invited: '邀请已发送', joinCompany: '加入企业', accept: '接受并加入', joined: '您已加入企业。',
    allocate: '分配资源', member: '成员', resourceType: '资源类型', resource: '资源',
    assign: '分配', assigned: '已分配', waitingAccepted: '已接受', history: '企业历史',
    allocatedTo: '分配给', switchTo: (name) => `切换到 ${name}`, deviceId: '设备 ID',
    pairingCode: '配对码', bind: '绑定', bound: '设备已绑定', devicesMenu: '设备',
  },
};

const path = (link) => link.replace(/^https?:\/\/[^/]+/, '');

async function menuLabels(page) {
  const nav = page.locator('nav.side-menu');
  await expect(nav.locator('.menu-item').first()).toBeVisible();
  return (await nav.locator('.menu-list > li > .menu-item .menu-label').allTextContents()).map((s) => s.trim());
}

for (const lang of ['en', 'zh']) {
  test(`company: create, invite, join by mail, allocate, member menu (${lang})`, async ({ page, browser, request, consoleErrors }) => {
    const t = T[lang];
    const stamp = Date.now();
    const a = `owner-${lang}-${stamp}@example.com`;
    const b = `staff-${lang}-${stamp}@example.com`;
    const company = lang === 'en' ? `Acme Compute ${stamp % 10000}` : `算力公司 ${stamp % 10000}`;
    await verifiedAccount(request, a);
    await verifiedAccount(request, b);

    // A signs in and creates a company from the company switcher.
    await signIn(page, a, { lang });
    await page.getByRole('combobox', { name: t.switchCompany }).selectOption('__create_or_join');
    await expect(page).toHaveURL(/\/company-email$/);
    await expect(page.getByRole('heading', { name: t.companies, exact: true })).toBeVisible();
    await page.screenshot({ path: `test-results/companies-hub-${lang}.png`, fullPage: true });
    await page.getByLabel(t.companyName).fill(company);
    await page.getByRole('button', { name: t.create, exact: true }).click();
    await expect(page).toHaveURL(/\/app$/);
    // The admin menu has the company entry.
    await expect.poll(() => menuLabels(page)).toContain(t.companyMenu);
    expect(await page.getByRole('combobox', { name: t.switchCompany }).locator('option:checked').textContent()).toBe(company);

    // A invites B.
    await page.locator('.menu-item', { hasText: t.companyMenu }).first().click();
    await expect(page).toHaveURL(/\/company$/);
    await expect(page.getByRole('heading', { name: company, level: 1 })).toBeVisible();
    const invite = page.locator('form', { has: page.getByRole('button', { name: t.invite, exact: true }) });
    await invite.getByLabel(t.email, { exact: true }).fill(b);
    await invite.getByRole('button', { name: t.invite, exact: true }).click();
    await expect(page.getByText(t.invited).first()).toBeVisible();
    await expect(page.locator('tr', { hasText: b })).toBeVisible();

    // B opens the mailed link signed out, signs in on the page and joins.
    const link = await mailedLink(b, /https?:\/\/\S+\/iam\/v1\/sme\/join\?code=\S+/);
    const contextB = await browser.newContext();
    const pageB = await contextB.newPage();
    const errorsB = [];
    pageB.on('console', (msg) => msg.type() === 'error' && errorsB.push(msg.text()));
    pageB.on('pageerror', (err) => errorsB.push(String(err)));
    await pageB.goto(`${path(link)}&language=${lang}`);
    await expectHydrated(pageB);
    await expect(pageB.getByRole('heading', { name: t.joinCompany })).toBeVisible();
    await submitSignIn(pageB, b, { lang });
    // The link asks first (issue 44): it joins on Accept.
    await pageB.getByRole('button', { name: t.accept }).click();
    await expect(pageB.getByRole('heading', { name: t.joined })).toBeVisible();
    await pageB.screenshot({ path: `test-results/companies-joined-${lang}.png`, fullPage: true });

    // A sees the accepted invitation.
    await page.reload();
    await expect(page.locator('tr', { hasText: b }).filter({ hasText: t.waitingAccepted }).first()).toBeVisible();
    await page.screenshot({ path: `test-results/companies-admin-${lang}.png`, fullPage: true });

    // A binds a device in the company context (a device registered as its agent would)...
    const reg = await request.post('/api/agent/v1/register', {
      data: { type: 'Z-BOX', name: `Box ${lang}`, spec: { cpu_cores: 4, memory_bytes: 17179869184, disk_bytes: 549755813888, gpus: [] } },
    });
    expect(reg.status()).toBe(200);
    const { device_id: deviceId, pairing_code: pairingCode } = (await reg.json()).data;
    await page.goto('/devices/link');
    await page.getByLabel(t.deviceId).fill(deviceId);
    await page.getByLabel(t.pairingCode).fill(pairingCode);
    await page.getByRole('button', { name: t.bind, exact: true }).click();
    await expect(page.getByText(t.bound).first()).toBeVisible();

    // ...and allocates it to B.
    await page.goto('/company/allocate');
    const option = page.locator('#alloc-member option', { hasText: b });
    await expect(option).toHaveCount(1);
    await page.getByLabel(t.member).selectOption((await option.getAttribute('value')) ?? '');
    await page.getByLabel(t.resourceType).selectOption('device');
    // Picked from the company's devices by name, not typed (issue 26).
    await expect(page.locator('#alloc-resource option', { hasText: `Box ${lang} · ${deviceId}` })).toHaveCount(1);
    await page.getByLabel(t.resource, { exact: true }).selectOption(deviceId);
    await page.getByRole('button', { name: t.assign, exact: true }).click();
    await expect(page.getByText(t.assigned, { exact: true }).first()).toBeVisible();
    await expect(page.locator('tr', { hasText: b }).filter({ hasText: deviceId }).filter({ hasText: `Box ${lang}` })).toBeVisible();
    await page.screenshot({ path: `test-results/companies-allocate-${lang}.png`, fullPage: true });

    // The company history shows who did what.
    await page.goto('/company/history');
    await expect(page.locator('tr', { hasText: t.allocatedTo }).filter({ hasText: b })).toBeVisible();
    await page.screenshot({ path: `test-results/companies-history-${lang}.png`, fullPage: true });

    // B switches into the company and sees only the member menu.
    await pageB.getByRole('button', { name: t.switchTo(company) }).click();
    await expect(pageB).toHaveURL(/\/app$/);
    await expect.poll(() => menuLabels(pageB)).toEqual([t.appMenu, t.accountMenu]);
    expect(await pageB.getByRole('combobox', { name: t.switchCompany }).locator('option:checked').textContent()).toBe(company);
    // The member has no devices page; the company's device is theirs to use through the API.
    const token = await pageB.evaluate(() => localStorage.getItem('token'));
    const mine = await (await request.get('/api/ebs/v2/devices', { headers: { Authorization: `Bearer ${token}` } })).json();
    expect(mine.data.items.map((d) => d.id)).toEqual([deviceId]);
    await pageB.goto('/company');
    await expect(pageB.locator('main')).toContainText(lang === 'en' ? 'Sorry, you do not have access to this page' : '抱歉，您无权访问此页面');
    await pageB.screenshot({ path: `test-results/companies-member-${lang}.png`, fullPage: true });

    await contextB.close();
    // 403: the member opening the company's pages, as checked above.
    expect(errorsB.filter((e) => !/status of 403/.test(e))).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
}

const W = {
  en: { wallet: 'Company wallet', fund: 'Fund from your wallet', coins: 'Coins', submit: 'Fund', funded: 'Moved 25.00 coins into the company wallet', invalid: 'Enter a number of coins above 0, with at most two decimals', short: 'Insufficient balance: 75.00 coins available, 500.00 needed', topUp: 'Company top-up', redeem: 'Redeem a top-up code' },
  zh: { wallet: '企业钱包', fund: '从我的钱包转入', coins: '币数', submit: '转入', funded: '已向企业钱包转入 25.00 币', invalid: '请输入大于 0 的币数，最多两位小数', short: '余额不足：可用 75.00 币，需要 500.00 币', topUp: '企业充值', redeem: '兑换充值码' },
};

for (const lang of ['en', 'zh']) {
  test(`company wallet: an admin funds it from their own wallet (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = { ...T[lang], ...W[lang] };
    const a = `funder-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, a);
    const made = await request.post('/api/iam/v1/sme', { headers: await apiSession(request, a), data: { name: `Fund Co ${Date.now() % 100000}` } });
    expect(made.status()).toBe(200);
    const sme = (await made.json()).data.id;
    await signIn(page, a, { lang });
    await page.getByRole('combobox', { name: t.switchCompany }).selectOption(sme);
    await expect.poll(() => menuLabels(page)).toContain(t.companyMenu);
    await page.goto(`/company?language=${lang}`);
    await expect(page.getByRole('heading', { name: t.wallet })).toBeVisible();
    const fund = page.locator('form', { has: page.getByRole('heading', { name: t.fund }) });
    await expect(page.getByRole('heading', { name: t.redeem })).toBeVisible();
    // Not a number: refused in the form; more than one has: the server's 409, under the field.
    await fund.getByLabel(t.coins).fill('ten');
    await fund.getByRole('button', { name: t.submit, exact: true }).click();
    await expect(fund.getByText(t.invalid)).toBeVisible();
    await fund.getByLabel(t.coins).fill('25');
    await fund.getByRole('button', { name: t.submit, exact: true }).click();
    await expect(page.getByText(t.funded).first()).toBeVisible();
    await expect(page.locator('[data-figure="balance"] .figure-value')).toHaveText('25.00');
    await expect(page.locator('tr[data-entry-kind="income"]', { hasText: t.topUp })).toContainText('+25.00');
    await fund.getByLabel(t.coins).fill('500');
    await fund.getByRole('button', { name: t.submit, exact: true }).click();
    await expect(fund.getByText(t.short)).toBeVisible();
    await page.screenshot({ path: `test-results/companies-wallet-${lang}.png`, fullPage: true });
    expect(consoleErrors.filter((e) => !/status of 409/.test(e))).toEqual([]);
  });
}
