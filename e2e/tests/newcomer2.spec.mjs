// What a newcomer hits, round two (issue 26): messaging a friend, a company joined elsewhere, the
// bell's links, phones told what to do (and desktop links kept on a phone), names following a
// language switch, the app details in Chinese, and the small frictions (a new tag, an empty
// search, an order draft through sign-in, a cancelled demand, a spaced device id, toasts clear of
// the header). English and Chinese, real binary, real Chromium.
import { devices } from '@playwright/test';
import { test, expect, expectHydrated, mailedLink, verifiedAccount, apiSession, signIn, submitSignIn } from './fixtures.mjs';

const T = {
  en: {
    messages: 'Messages', message: 'Message', pickFriend: 'Pick a friend to message',
    edit: 'Edit', newTag: 'New tag', save: 'Save', switchCompany: 'Switch company', notifications: 'Notifications',
    companies: 'Companies', myCompanies: 'My companies', signedIn: 'Signed in', exploreMarket: 'Explore Market',
    noMatch: (k) => `No app matches “${k}”`, demandName: 'Demand name', hours: 'Hours', app: 'App', signInToOrder: 'Sign in to place an order',
    submitOrder: 'Submit order', cancel: 'Cancel', cancelled: 'Cancelled', failed: 'Failed', deviceId: 'Device ID', pairingCode: 'Pairing code',
    bind: 'Bind', bound: 'Device bound', verifyFailed: 'This verification link is not valid.', checkEmail: 'Check Your Email',
  },
  zh: {
    messages: '消息', message: '发消息', pickFriend: '选择一位好友发消息',
    edit: '编辑', newTag: '新标签', save: '保存', switchCompany: '切换企业', notifications: '通知',
    companies: '企业', myCompanies: '我的企业', signedIn: '登录成功', exploreMarket: '探索市场',
    noMatch: (k) => `没有与“${k}”匹配的应用`, demandName: '需求名称', hours: '时长（小时）', app: '应用', signInToOrder: '登录后下单',
    submitOrder: '提交订单', cancel: '取消', cancelled: '已取消', failed: '已失败', deviceId: '设备 ID', pairingCode: '配对码',
    bind: '绑定', bound: '设备已绑定', verifyFailed: '此验证链接无效。', checkEmail: '查收邮件',
  },
};

const stamp = () => `${Date.now()}-${Math.floor(Math.random() * 1e4)}`;
const JOIN_LINK = /\/iam\/v1\/sme\/join\?code=([A-Za-z0-9_-]+)/;

async function ok(res) {
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()).data;
}

/** True when the two boxes share any area. */
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

for (const lang of ['en', 'zh']) {
  test(`messaging a friend opens the conversation; Enter adds a tag (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const s = stamp();
    const a = `msg-a-${lang}-${s}@example.com`;
    const b = `msg-b-${lang}-${s}@example.com`;
    await verifiedAccount(request, a);
    await verifiedAccount(request, b);
    const req = await ok(await request.post('/api/cim/v1/friends/requests', { headers: await apiSession(request, a), data: { email: b } }));
    await ok(await request.post(`/api/cim/v1/friends/requests/${req.id}/accept`, { headers: await apiSession(request, b) }));

    await signIn(page, a, { lang });
    // No conversation yet: Messages offers the friends themselves, not a link back to /friends.
    await page.goto('/messages');
    await expect(page.getByRole('heading', { name: t.pickFriend })).toBeVisible();
    // People are shown by their name: the address's local part for these accounts.
    const nameB = b.split('@')[0];
    const offered = page.locator('.conversations a.conversation', { hasText: nameB });
    await expect(offered).toHaveCount(1);
    await page.screenshot({ path: `test-results/newcomer2-messages-empty-${lang}.png`, fullPage: true });
    await offered.click();
    await expect(page).toHaveURL(/\/messages\?with=/);
    await expect(page.locator('.thread-header h2')).toHaveText(nameB);
    const composer = page.locator('form.composer');
    await composer.getByRole('textbox').fill(`hello ${lang}`);
    await composer.getByRole('textbox').press('Enter');
    await expect(page.locator('.bubble.mine', { hasText: `hello ${lang}` })).toBeVisible();
    // The page heading stays clear of the sticky header.
    const clear = () =>
      page.evaluate(() => {
        const h1 = document.querySelector('main h1')?.getBoundingClientRect();
        const header = document.querySelector('.console-header')?.getBoundingClientRect();
        return Boolean(h1 && header && h1.top >= header.bottom - 1);
      });
    await expect.poll(clear).toBe(true);

    // From the friends list, Message opens the same conversation, at the top of the page even
    // when the list was scrolled (a short window makes it scroll).
    await page.setViewportSize({ width: 1440, height: 420 });
    await page.goto('/friends');
    const row = page.locator('tr', { hasText: b });
    await expect(row).toBeVisible();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    await row.getByRole('link', { name: t.message, exact: true }).click();
    await expect(page).toHaveURL(/\/messages\?with=/);
    await expect(page.locator('.thread-header h2')).toHaveText(nameB);
    await expect(page.locator('.bubble.mine', { hasText: `hello ${lang}` })).toBeVisible();
    await expect.poll(clear).toBe(true);
    await page.setViewportSize({ width: 1440, height: 900 });

    // Enter in "New tag" adds the tag, checked, and keeps the dialog open; Save saves.
    await page.goto('/friends');
    await page.locator('tr', { hasText: b }).getByRole('button', { name: new RegExp(`^${t.edit} `) }).click();
    const dialog = page.getByRole('dialog');
    const tag = `team-${lang}`;
    await dialog.getByLabel(t.newTag, { exact: true }).fill(tag);
    await dialog.getByLabel(t.newTag, { exact: true }).press('Enter');
    await expect(dialog).toBeVisible();
    await expect(dialog.getByLabel(tag, { exact: true })).toBeChecked();
    await expect(dialog.getByLabel(t.newTag, { exact: true })).toHaveValue('');
    await page.screenshot({ path: `test-results/newcomer2-new-tag-${lang}.png` });
    await dialog.getByRole('button', { name: t.save, exact: true }).click();
    await expect(dialog).toHaveCount(0);
    await expect(page.locator('tr', { hasText: b }).locator('.chip')).toHaveText(tag);
    expect(consoleErrors).toEqual([]);
  });

  test(`a company joined elsewhere shows at once; the bell links to the invitation (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const s = stamp();
    const admin = `co-admin-${lang}-${s}@example.com`;
    const me = `co-me-${lang}-${s}@example.com`;
    const company = `Elsewhere ${lang} ${s}`;
    await verifiedAccount(request, admin);
    await verifiedAccount(request, me);
    const adminPersonal = await apiSession(request, admin);
    const created = await ok(await request.post('/api/iam/v1/sme', { headers: adminPersonal, data: { name: company } }));
    const switched = await ok(await request.post('/api/iam/v1/switch', { headers: adminPersonal, data: { smeId: created.id } }));
    const adminH = { authorization: `Bearer ${switched.token}` };

    await signIn(page, me, { lang });
    // The sign-in toast stays clear of the header's company switcher and bell.
    const toast = page.locator('.toast', { hasText: t.signedIn });
    await expect(toast).toBeVisible();
    const switcher = page.getByRole('combobox', { name: t.switchCompany });
    await expect(switcher).toBeVisible();
    const bell = page.getByRole('button', { name: t.notifications, exact: true });
    const toastBox = await toast.boundingBox();
    expect(overlap(toastBox, await switcher.boundingBox())).toBe(false);
    expect(overlap(toastBox, await bell.boundingBox())).toBe(false);
    expect(toastBox.y).toBeGreaterThanOrEqual((await page.locator('.console-header').boundingBox()).height);
    await page.screenshot({ path: `test-results/newcomer2-toast-${lang}.png` });

    // Invited: the bell's notification links to where the invitation is answered.
    await ok(await request.post('/api/iam/v1/sme/invite', { headers: adminH, data: { email: me, role: 'member' } }));
    await page.reload();
    await expect(bell.locator('.badge')).toHaveText('1');
    await bell.click();
    const link = page.locator('.notifications-popover').getByRole('link', { name: new RegExp(company) });
    await expect(link).toHaveAttribute('href', '/company-email');
    await page.screenshot({ path: `test-results/newcomer2-bell-${lang}.png` });
    await link.click();
    await expect(page).toHaveURL(/\/company-email$/);
    await expect(page.getByRole('heading', { name: t.companies, level: 1 })).toBeVisible();

    // Joined by the mailed link in another browser: this session shows the company at once.
    const code = (await mailedLink(me, JOIN_LINK)).match(JOIN_LINK)[1];
    await ok(await request.post('/api/iam/v1/sme/join', { headers: await apiSession(request, me), data: { code, accept: true } }));
    await page.goto('/app');
    await expect(switcher.locator('option', { hasText: company })).toHaveCount(1);
    await page.goto('/company-email');
    await expect(page.locator('section[aria-labelledby="my-companies-title"]')).toContainText(company);
    await page.screenshot({ path: `test-results/newcomer2-joined-${lang}.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  });

  test(`a phone signs in on its own pages; desktop links keep their page (${lang})`, async ({ browser, baseURL }) => {
    const t = T[lang];
    // eslint-disable-next-line no-unused-vars
    const { defaultBrowserType, ...iphone } = devices['iPhone 13'];
    const phone = await browser.newContext({ ...iphone, baseURL });
    const page = await phone.newPage();
    try {
      // Check your email: the phone's own sign-in and password pages (issue 41), none that would
      // bounce to the market.
      await page.goto(`/check-email?email=phone-${lang}@example.com&language=${lang}`);
      await expectHydrated(page);
      await expect(page.getByRole('heading', { name: t.checkEmail })).toBeVisible();
      await expect(page.locator('a[href^="/auth/"], a[href^="/forgot-password"]')).toHaveCount(0);
      await expect(page.locator('.auth-links a[href^="/m/auth/signin"]')).toHaveCount(1);
      await expect(page.locator('.auth-links a[href^="/m/forgot-password"]')).toHaveCount(1);
      await page.screenshot({ path: `test-results/newcomer2-phone-check-email-${lang}.png`, fullPage: true });
      await page.locator('.auth-links a[href^="/m/auth/signin"]').click();
      await expect(page).toHaveURL(/\/m\/auth\/signin/);
      await expect(page.locator('.tab-bar')).toBeVisible();

      // Email verified (here: a link that is not valid): the same.
      await page.goto(`/email-verified?token=not-a-token&language=${lang}`);
      await expect(page.getByRole('heading', { name: t.verifyFailed })).toBeVisible();
      await expect(page.locator('a[href^="/auth/"]')).toHaveCount(0);

      // A desktop link on a phone lands on its phone twin, subject kept.
      await page.goto(`/market/details?id=grafana&language=${lang}`);
      await expect(page).toHaveURL(new RegExp(`/m/market/details\\?id=grafana&language=${lang}$`));
      await expect(page.getByRole('heading', { name: 'Grafana', level: 1 })).toBeVisible();
      await page.goto(`/guide?language=${lang}`);
      await expect(page).toHaveURL(/\/m\/guide\?language=/);
      await page.goto(`/wallet?language=${lang}`);
      await expect(page).toHaveURL(/\/m\/auth\/signin\?redirect=%2Fm%2Fwallet/);
      await page.goto(`/devices?language=${lang}`);
      await expect(page).toHaveURL(new RegExp(`/m/market\\?language=${lang}$`));
    } finally {
      await phone.close();
    }
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
    await page.screenshot({ path: `test-results/newcomer2-cancelled-${lang}.png`, fullPage: true });

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

test('names follow a language switch on /app; the app details in Chinese say each thing once', async ({ page, request, consoleErrors }) => {
  const s = stamp();
  const me = `names-${s}@example.com`;
  await verifiedAccount(request, me);
  const headers = await apiSession(request, me);
  const reg = await ok(
    await request.post('/api/agent/v1/register', {
      data: { type: 'Z-BOX', name: 'Names box', spec: { cpu_cores: 8, memory_bytes: 34359738368, disk_bytes: 1099511627776, gpus: [] } },
    }),
  );
  await ok(await request.post('/api/ebs/v2/devices/link', { headers, data: { device_id: reg.device_id, pairing_code: reg.pairing_code } }));
  const inst = await ok(await request.post('/api/rmp/v1/apps/install', { headers, data: { app_id: 'terraria-server', device_id: reg.device_id } }));

  await signIn(page, me);
  await page.goto('/app');
  const row = page.locator('.app-row').first();
  await expect(row).toContainText('Terraria Server');
  // Switched in place (no reload): the names follow.
  await page.getByRole('group', { name: 'Language' }).getByRole('button', { name: '中文' }).click();
  await expect(row).toContainText('Terraria 服务器');
  await page.screenshot({ path: 'test-results/newcomer2-app-names-zh.png', fullPage: true });

  // The details in Chinese: "类型" once (the type), the kind under its own label, the type translated.
  await page.goto(`/app/details?id=${inst.id}`);
  const facts = page.locator('#app-facts').locator('..');
  await expect(facts.locator('dt', { hasText: '使用方式' })).toHaveCount(1);
  await expect(facts.locator('dt').filter({ hasText: /^类型$/ })).toHaveCount(1);
  await expect(facts.locator('dt').filter({ hasText: /^类型$/ }).locator('+ dd')).toHaveText('服务器');
  await page.screenshot({ path: 'test-results/newcomer2-app-details-zh.png', fullPage: true });
  await page.getByRole('group', { name: '语言' }).getByRole('button', { name: /EN/ }).click();
  await expect(facts.locator('dt').filter({ hasText: /^Type$/ }).locator('+ dd')).toHaveText('Server');
  await expect(page.locator('main h1')).toContainText('Terraria Server');
  expect(consoleErrors).toEqual([]);
});
