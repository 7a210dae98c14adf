// The console around every page: a context switch never lands on a 403, the settings dialog is
// whole, forms say what is wrong (and old messages go) and keep what was typed (an order draft
// through sign-in, a device id typed with spaces), a search that finds nothing says so, a
// cancelled demand reads cancelled, market cards keep to their lines, ?language= does not stick,
// the bell's "View all" and the invitation in it. English and Chinese, real binary, real Chromium.
import { test, expect, expectHydrated, mailMatch, mailedLink, verifiedAccount, apiSession, PASSWORD, signIn, submitSignIn, ok } from './fixtures.mjs';

const T = {
  en: {
    email: 'Email', password: 'Password', switchCompany: 'Switch company', companyName: 'Company name',
    create: 'Create', forbidden: 'Sorry, you do not have access to this page', personal: 'Personal', settings: 'Settings',
    close: 'Close', themeColor: 'Theme color', signUp: 'Create Account', rule: '8-15 characters, at least one letter and one digit',
    weak: 'Password must be 8-15 characters with at least one letter and one digit', incorrect: 'Password Incorrect',
    mismatch: "Password doesn't match", current: 'Current password', newPassword: 'New password', confirm: 'Confirm password',
    save: 'Save', taken: 'This email is already registered', deviceId: 'Device ID', pairingCode: 'Pairing code', bind: 'Bind',
    wrongCode: 'The pairing code is wrong: enter the code the box prints next to its device ID', notifications: 'Notifications',
    viewAll: 'View all', invitationTitle: (c) => `Invitation to join ${c}`,
    noMatch: (k) => `No app matches “${k}”`, demandName: 'Demand name', hours: 'Hours', signInToOrder: 'Sign in to place an order',
    submitOrder: 'Submit order', cancel: 'Cancel', cancelled: 'Cancelled', failed: 'Failed', bound: 'Device bound',
  },
  zh: {
    email: '邮箱', password: '密码', switchCompany: '切换企业', companyName: '企业名称',
    create: '创建', forbidden: '抱歉，您无权访问此页面', personal: '个人', settings: '设置',
    close: '关闭', themeColor: '主题色', signUp: '创建账户', rule: null,
    weak: '密码须为 8-15 个字符，且至少包含一个字母和一个数字', incorrect: '密码错误',
    mismatch: '两次输入的密码不一致', current: '当前密码', newPassword: '新密码', confirm: '确认密码',
    save: '保存', taken: '该邮箱已注册', deviceId: '设备 ID', pairingCode: '配对码', bind: '绑定',
    wrongCode: '配对码错误：请输入设备在其设备 ID 旁打印的配对码', notifications: '通知',
    viewAll: '查看全部', invitationTitle: (c) => `邀请您加入 ${c}`,
    noMatch: (k) => `没有与“${k}”匹配的应用`, demandName: '需求名称', hours: '时长（小时）', signInToOrder: '登录后下单',
    submitOrder: '提交订单', cancel: '取消', cancelled: '已取消', failed: '已失败', bound: '设备已绑定',
  },
};

const stamp = () => `${Date.now()}-${Math.floor(Math.random() * 1e4)}`;

/** A company made through the API by `email` (who becomes its admin); returns its id and admin headers. */
async function apiCompany(request, email, name) {
  const personal = await apiSession(request, email);
  const res = await request.post('/api/iam/v1/sme', { headers: personal, data: { name } });
  expect(res.status(), await res.text()).toBe(200);
  const id = (await res.json()).data.id;
  const sw = await request.post('/api/iam/v1/switch', { headers: personal, data: { smeId: id } });
  expect(sw.status()).toBe(200);
  return { id, admin: { authorization: `Bearer ${(await sw.json()).data.token}` } };
}

/** `member` joins the company of `admin` through a mailed invitation. */
async function apiJoin(request, admin, member) {
  const inv = await request.post('/api/iam/v1/sme/invite', { headers: admin, data: { email: member } });
  expect(inv.status(), await inv.text()).toBe(200);
  const link = await mailedLink(member, /\/iam\/v1\/sme\/join\?code=([A-Za-z0-9_-]+)/);
  const code = link.split('code=')[1];
  const join = await request.post('/api/iam/v1/sme/join', { headers: await apiSession(request, member), data: { code, accept: true } });
  expect(join.status(), await join.text()).toBe(200);
}

async function expectNoForbidden(page, t) {
  await expect(page.locator('main')).toBeVisible();
  await expect(page.locator('main')).not.toContainText(t.forbidden);
  await expect(page).not.toHaveURL(/\/403/);
}

/** Signs in, then waits for the console's page: a switch made before would race the landing. */
async function signInToConsole(page, lang, email, redirect = '') {
  await signIn(page, email, { lang, redirect });
  await expect(page.locator('main h1').first()).toBeVisible();
}

for (const lang of ['en', 'zh']) {
  test(`a context switch never lands on a 403 (${lang})`, async ({ page, browser, request, consoleErrors }) => {
    const t = T[lang];
    const s = stamp();
    const a = `switch-admin-${lang}-${s}@example.com`;
    const b = `switch-member-${lang}-${s}@example.com`;
    await verifiedAccount(request, a);
    await verifiedAccount(request, b);

    // Creating a company switches into it: its first page, not a 403 under "Company created".
    await signInToConsole(page, lang, a);
    await page.getByRole('combobox', { name: t.switchCompany }).selectOption('__create_or_join');
    await expect(page).toHaveURL(/\/company-email$/);
    const company = `Switch Co ${s.slice(-5)}`;
    await page.getByLabel(t.companyName).fill(company);
    await page.getByRole('button', { name: t.create, exact: true }).click();
    await expect(page).toHaveURL(/\/app$/);
    await expect(page.getByRole('combobox', { name: t.switchCompany }).locator('option:checked')).toHaveText(company);
    await expectNoForbidden(page, t);
    await page.screenshot({ path: `test-results/console-switch-created-${lang}.png` });

    // Back to Personal from /company (an admin page): the personal menu's first page.
    await page.goto('/company');
    await expect(page.getByRole('heading', { name: company, level: 1 })).toBeVisible();
    await page.getByRole('combobox', { name: t.switchCompany }).selectOption({ label: t.personal });
    await expect(page).toHaveURL(/\/app$/);
    await expectNoForbidden(page, t);

    // A page both contexts allow stays open across the switch.
    await page.goto('/account');
    await expect(page.locator('main h1')).toBeVisible();
    await page.getByRole('combobox', { name: t.switchCompany }).selectOption({ label: company });
    await expect(page.getByRole('combobox', { name: t.switchCompany }).locator('option:checked')).toHaveText(company);
    await expect(page).toHaveURL(/\/account$/);
    await expectNoForbidden(page, t);

    // A member switching while on /devices (members have no devices page) lands on /app.
    const token = await page.evaluate(() => localStorage.getItem('token'));
    await apiJoin(request, { authorization: `Bearer ${token}` }, b);
    const contextB = await browser.newContext();
    const pageB = await contextB.newPage();
    await signInToConsole(pageB, lang, b, '/devices');
    await expect(pageB).toHaveURL(/\/devices$/);
    await pageB.getByRole('combobox', { name: t.switchCompany }).selectOption({ label: company });
    await expect(pageB).toHaveURL(/\/app$/);
    await expectNoForbidden(pageB, t);
    await pageB.screenshot({ path: `test-results/console-switch-member-${lang}.png` });
    await contextB.close();
    expect(consoleErrors).toEqual([]);
  });

  test(`the settings dialog is whole, centred and scrollable (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const email = `settings-${lang}-${stamp()}@example.com`;
    await verifiedAccount(request, email);
    for (const [width, height] of [[1280, 860], [1440, 900], [1280, 420]]) {
      await page.setViewportSize({ width, height });
      if (width === 1280 && height === 860) await signInToConsole(page, lang, email);
      await page.getByRole('button', { name: t.settings, exact: true }).click();
      const dialog = page.getByRole('dialog', { name: t.settings });
      await expect(dialog).toBeVisible();
      const box = await dialog.boundingBox();
      expect(box.y, `top at ${width}x${height}`).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height, `bottom at ${width}x${height}`).toBeLessThanOrEqual(height);
      // Centred horizontally (within a pixel or two).
      expect(Math.abs(box.x + box.width / 2 - width / 2)).toBeLessThan(2);
      const close = dialog.getByRole('button', { name: t.close });
      await expect(close).toBeInViewport();
      // What is below the fold scrolls into view inside the dialog.
      const reset = dialog.getByRole('button', { name: lang === 'en' ? 'Reset' : '重置' });
      await reset.scrollIntoViewIfNeeded();
      await expect(reset).toBeInViewport();
      await page.screenshot({ path: `test-results/console-settings-${width}x${height}-${lang}.png` });
      await close.click();
      await expect(dialog).toBeHidden();
    }
    expect(consoleErrors).toEqual([]);
  });

  test(`messages say what is wrong, and old ones go (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    // Sign-up: the rule is shown before typing; a weak password gets the precise message, the rule stays.
    await page.goto(`/auth/signup?language=${lang}`);
    await expectHydrated(page);
    const form = page.locator('form');
    const passwordField = form.locator('.field', { has: page.getByLabel(t.password, { exact: true }) });
    await expect(passwordField.locator('.field-hint')).toBeVisible();
    if (t.rule) await expect(passwordField.locator('.field-hint')).toHaveText(t.rule);
    const taken = `taken-${lang}-${stamp()}@example.com`;
    await verifiedAccount(request, taken);
    await form.getByLabel(t.email, { exact: true }).fill(taken);
    await form.getByLabel(t.password, { exact: true }).fill('abcdefghij');
    await form.getByLabel(t.confirm).fill('abcdefghij');
    await form.getByRole('checkbox').check();
    await form.getByRole('button', { name: t.signUp }).click();
    await expect(passwordField.locator('.field-error')).toHaveText(t.weak);
    await expect(passwordField.locator('.field-hint')).toBeVisible();
    await expect(page.getByText(t.incorrect, { exact: true })).toHaveCount(0);
    await page.screenshot({ path: `test-results/console-signup-weak-${lang}.png` });
    // The server's own answer (a taken address) shows under the field it is about.
    await form.getByLabel(t.password, { exact: true }).fill('abcdefgh12');
    await form.getByLabel(t.confirm).fill('abcdefgh12');
    await form.getByRole('button', { name: t.signUp }).click();
    const emailField = form.locator('.field', { has: page.getByLabel(t.email, { exact: true }) });
    await expect(emailField.locator('.field-error')).toHaveText(t.taken);
    await expect(passwordField.locator('.field-error')).toHaveCount(0);

    // Change password: a wrong current password, then a mismatch: the first message goes.
    const email = `messages-${lang}-${stamp()}@example.com`;
    await verifiedAccount(request, email);
    await signInToConsole(page, lang, email);
    await page.goto('/account/password');
    const pw = page.locator('form');
    await pw.getByLabel(t.current).fill('Wrong1234');
    await pw.getByLabel(t.newPassword).fill('Secret456');
    await pw.getByLabel(t.confirm).fill('Secret456');
    await pw.getByRole('button', { name: t.save }).click();
    await expect(page.getByText(t.incorrect, { exact: true })).toBeVisible();
    await pw.getByLabel(t.current).fill(PASSWORD);
    await pw.getByLabel(t.confirm).fill('Secret457');
    await pw.getByRole('button', { name: t.save }).click();
    await expect(page.getByText(t.mismatch, { exact: true })).toBeVisible();
    await expect(page.getByText(t.incorrect, { exact: true })).toHaveCount(0);
    await page.screenshot({ path: `test-results/console-password-${lang}.png` });

    // A wrong pairing code says so (the device ID is fine).
    const reg = await request.post('/api/agent/v1/register', {
      data: { type: 'Z-BOX', name: 'Box', spec: { cpu_cores: 2, memory_bytes: 2 ** 32, disk_bytes: 2 ** 36, gpus: [] } },
    });
    const { device_id, pairing_code } = (await reg.json()).data;
    await page.goto('/devices/link');
    await page.getByLabel(t.deviceId).fill(device_id);
    await page.getByLabel(t.pairingCode).fill(pairing_code === '22222222' ? '33333333' : '22222222');
    await page.getByRole('button', { name: t.bind, exact: true }).click();
    await expect(page.getByRole('alert')).toHaveText(t.wrongCode);
    await page.screenshot({ path: `test-results/console-pairing-${lang}.png` });
    expect(consoleErrors.filter((e) => !/status of (400|409)/.test(e))).toEqual([]);
  });

  test(`small ones: cards, the language query, the bell's list, invitations in the bell (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    // Market cards: the summary keeps to its two lines above the tag row.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`/market?language=${lang}`);
    await expectHydrated(page);
    const cards = page.locator('.app-card');
    await expect(cards.first()).toBeVisible();
    const overlaps = await cards.evaluateAll((els) =>
      els.flatMap((card) => {
        const summary = card.querySelector('.app-card-summary');
        const chips = card.querySelector('.chips');
        if (!summary || !chips) return [];
        const s = summary.getBoundingClientRect();
        const c = chips.getBoundingClientRect();
        const line = parseFloat(getComputedStyle(summary).lineHeight);
        return s.bottom > c.top + 0.5 || s.height > 2 * line + 1 ? [`${card.textContent.slice(0, 40)}: ${s.height} > ${2 * line}`] : [];
      }),
    );
    expect(overlaps).toEqual([]);
    await page.screenshot({ path: `test-results/console-market-cards-${lang}.png` });

    // The language toggle drops ?language= so a reload keeps the choice.
    const other = lang === 'en' ? 'zh' : 'en';
    await page.getByRole('button', { name: other === 'zh' ? '中文' : 'EN' }).first().click();
    await expect(page.locator('html')).toHaveAttribute('lang', other);
    await expect(page).not.toHaveURL(/language=/);
    await page.reload();
    await expectHydrated(page);
    await expect(page.locator('html')).toHaveAttribute('lang', other);

    // An invitation to an existing account rings its bell; "View all" lists the notifications.
    const s = stamp();
    const owner = `bell-owner-${lang}-${s}@example.com`;
    const guest = `bell-guest-${lang}-${s}@example.com`;
    await verifiedAccount(request, owner);
    await verifiedAccount(request, guest);
    const company = `Bell Co ${s.slice(-5)}`;
    const { admin } = await apiCompany(request, owner, company);
    const inv = await request.post('/api/iam/v1/sme/invite', { headers: admin, data: { email: guest } });
    expect(inv.status()).toBe(200);
    await signInToConsole(page, lang, guest);
    const bell = page.getByRole('button', { name: t.notifications, exact: true });
    await expect(bell.locator('.badge')).toHaveText('1');
    await bell.click();
    await expect(page.locator('.notifications-popover')).toContainText(t.invitationTitle(company));
    await page.getByRole('link', { name: t.viewAll }).click();
    await expect(page).toHaveURL(/\/messages\?tab=notifications$/);
    await expect(page.locator('main')).toContainText(t.invitationTitle(company));
    await expectNoForbidden(page, t);
    await page.screenshot({ path: `test-results/console-notifications-${lang}.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
    expect(mailMatch(guest, /sme\/join/)).not.toBeNull();
  });

  test(`small frictions: empty search, an order through sign-in, a cancelled demand, a spaced device id (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const s = stamp();
    const me = `friction-${lang}-${s}@example.com`;
    await verifiedAccount(request, me);

    // A search that finds nothing says so.
    await page.goto(`/market/more?keyword=zzqx${lang}&language=${lang}`);
    await expect(page.getByText(t.noMatch(`zzqx${lang}`))).toBeVisible();

    // A visitor's order comes back filled after the sign-in it needs.
    await page.goto(`/on-demand/place-an-order?language=${lang}`);
    await expectHydrated(page);
    const name = `Draft ${lang} ${s}`;
    await page.getByLabel(t.demandName).fill(name);
    await page.locator('#demand-app').selectOption('terraria-server');
    await page.getByLabel(t.hours, { exact: true }).fill('3');
    await page.getByRole('button', { name: t.signInToOrder }).click();
    await expect(page).toHaveURL(/\/auth\/signin\?redirect=/);
    await submitSignIn(page, me, { lang });
    await expect(page).toHaveURL(/\/on-demand\/place-an-order/);
    await expect(page.getByLabel(t.demandName)).toHaveValue(name);
    await expect(page.locator('#demand-app')).toHaveValue('terraria-server');
    await expect(page.getByLabel(t.hours, { exact: true })).toHaveValue('3');

    // Posted, then cancelled: it reads cancelled, not failed.
    await page.getByRole('button', { name: t.submitOrder }).click();
    await expect(page).toHaveURL(/\/demands-and-offers/);
    const order = page.locator('#my-demands').locator('..').locator('[data-order]', { hasText: name });
    await order.getByRole('button', { name: t.cancel, exact: true }).click();
    await expect(order.locator('.app-status')).toHaveText(t.cancelled);
    await expect(order).not.toContainText(t.failed);
    await page.screenshot({ path: `test-results/console-cancelled-${lang}.png`, fullPage: true });

    // A device id typed with spaces, like its pairing code, binds.
    const reg = await ok(
      await request.post('/api/agent/v1/register', {
        data: { type: 'Z-BOX', name: `Spaced ${lang}`, spec: { cpu_cores: 4, memory_bytes: 17179869184, disk_bytes: 549755813888, gpus: [] } },
      }),
    );
    await page.goto('/devices/link');
    await page.getByLabel(t.deviceId).fill(` ${reg.device_id.replaceAll('-', ' ').toLowerCase()} `);
    await page.getByLabel(t.pairingCode).fill(`${reg.pairing_code.slice(0, 4)} ${reg.pairing_code.slice(4)}`);
    await page.getByRole('button', { name: t.bind, exact: true }).click();
    await expect(page.getByText(t.bound).first()).toBeVisible();
    expect(consoleErrors).toEqual([]);
  });
}
