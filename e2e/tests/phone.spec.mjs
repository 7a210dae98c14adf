// A console in the pocket (issue 41, item 1): on an iPhone and on an Android phone (their user
// agents and screens), in English and in Chinese, a renter signs in on /m/, stops and starts a
// rental, redeems a top-up code, reads a notification and follows it, and signs in again when the
// session ends mid-action, landing back where they were; a desktop console link opens its phone
// twin. Item 3: every console page at 390 and 768 px wide, en and zh, scrolls no sideways, and the
// header's menu holds what the header cannot.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test, expect, expectHydrated, verifiedAccount, apiSession, submitSignIn, fakeBox } from './fixtures.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

const PHONES = {
  iPhone: {
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
    viewport: { width: 390, height: 844 },
  },
  Android: {
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
    viewport: { width: 412, height: 915 },
  },
};

const T = {
  en: {
    signIn: 'Sign In', running: 'Running', stopping: 'Stopping', stopped: 'Stopped', starting: 'Starting', stop: 'Stop', start: 'Start',
    userMenu: 'User menu', wallet: 'Wallet', notifications: 'Notifications', code: 'Top-up code', redeem: 'Redeem',
    redeemed: 'Top-up code redeemed', started: 'Rental started', refresh: 'Refresh', meter: 'Rental meter', ended: 'Ended',
  },
  zh: {
    signIn: '登录', running: '运行中', stopping: '停止中', stopped: '已停止', starting: '启动中', stop: '停止', start: '启动',
    userMenu: '用户菜单', wallet: '钱包', notifications: '通知', code: '充值码', redeem: '兑换',
    redeemed: '兑换充值码', started: '租用已开始', refresh: '刷新', meter: '租用计费', ended: '已结束',
  },
};

async function ok(res) {
  const text = await res.text();
  expect(res.status(), text).toBe(200);
  return JSON.parse(text).data;
}

/** `zmarket coins codes` against the server's data directory: the printed codes. */
function printCodes(amount, count) {
  const out = execFileSync(BIN, ['coins', 'codes', '--data-dir', process.env.E2E_DATA_DIR, '--amount', amount, '--count', String(count)], {
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
    encoding: 'utf8',
  });
  return out.trim().split('\n');
}

/** The box answers the command the market sent for `id` (a stop, a start) as done, reporting `status`. */
async function answer(box, id, status) {
  await expect.poll(async () => (await box.beat()).some((c) => c.payload.installation_id === id), { timeout: 15_000 }).toBe(true);
  const cmd = (await box.beat()).find((c) => c.payload.installation_id === id);
  await box.beat({ installations: [{ id, status, url: 'http://10.9.8.7:32768/' }], acks: [{ id: cmd.id, ok: true }] });
}

for (const [phone, lang] of [['iPhone', 'en'], ['Android', 'zh']]) {
  test.describe(`${phone} (${lang})`, () => {
    test.use({ ...PHONES[phone], isMobile: true, hasTouch: true });

    test(`sign in on /m/, stop and start a rental, redeem a code, follow a notification, sign in again mid-action`, async ({ page, request, consoleErrors }) => {
      test.setTimeout(180_000);
      const t = T[lang];
      const s = `${phone.toLowerCase()}-${lang}-${Date.now()}`;
      const owner = `phone-owner-${s}@example.com`;
      const renter = `phone-renter-${s}@example.com`;
      await verifiedAccount(request, owner);
      await verifiedAccount(request, renter);
      const ownerAuth = await apiSession(request, owner);
      const renterAuth = await apiSession(request, renter);
      const box = await fakeBox(request, ownerAuth, `Pocket box ${s}`);
      await ok(await request.put(`/api/ebs/v2/devices/${box.id}/sharing`, { headers: ownerAuth, data: { mode: 'manual', rentable: true, price_per_hour: 100 } }));
      const inst = await ok(await request.post('/api/rmp/v1/apps/rent', { headers: renterAuth, data: { app_id: 'grafana', device_id: box.id, hours: 2 } }));
      await answer(box, inst.id, 'running');

      // A desktop console link on a phone (/app, as in a mail) opens the phone console, which asks
      // to sign in first, on the phone's own sign-in page.
      await page.goto(`/app?language=${lang}`);
      await expect(page).toHaveURL(/\/m\/auth\/signin\?redirect=%2Fm%2Fapp/);
      await expectHydrated(page);
      await expect(page.locator('.tab-bar')).toBeVisible();
      await expect(page.locator('[data-phone-account="signin"]')).toHaveText(t.signIn);
      await page.screenshot({ path: `test-results/phone-signin-${phone}-${lang}.png`, fullPage: true });
      await submitSignIn(page, renter, { lang });
      await expect(page).toHaveURL(new RegExp(`/m/app\\?language=${lang}$`));

      // The rental: its state, then Stop and Start, the box answering each.
      const row = page.locator(`.app-row[data-installation="${inst.id}"]`);
      await expect(row.locator('.app-status').first()).toHaveText(t.running);
      await expect(page.locator('[data-phone-account="user"]')).toBeVisible();
      await page.screenshot({ path: `test-results/phone-app-${phone}-${lang}.png`, fullPage: true });
      await row.locator('[data-action="stop"]').click();
      await expect(row.locator('.app-status').first()).toHaveText(t.stopping);
      await answer(box, inst.id, 'stopped');
      await expect(row.locator('.app-status').first()).toHaveText(t.stopped);
      await row.locator('[data-action="start"]').click();
      await expect(row.locator('.app-status').first()).toHaveText(t.starting);
      await answer(box, inst.id, 'running');
      await expect(row.locator('.app-status').first()).toHaveText(t.running);

      // Its page: the meter, inside /m/.
      await row.getByRole('link', { name: 'Grafana' }).click();
      await expect(page).toHaveURL(new RegExp(`/m/app/details\\?id=${inst.id}$`));
      await expect(page.getByRole('heading', { name: t.meter })).toBeVisible();
      await expect(page.getByTestId('rental-billed')).toBeVisible();
      await page.screenshot({ path: `test-results/phone-app-details-${phone}-${lang}.png`, fullPage: true });

      // The wallet, from the avatar's menu: a code redeemed in place.
      const [code] = printCodes('25', 1);
      await page.getByRole('button', { name: t.userMenu }).click();
      await page.locator('.user-popover').getByRole('link', { name: t.wallet }).click();
      await expect(page).toHaveURL(/\/m\/wallet$/);
      const available = page.locator('[data-figure="available"] .figure-value');
      await expect(available).not.toHaveText('');
      const before = Number((await available.textContent()).replace(/,/g, ''));
      await page.getByLabel(t.code, { exact: true }).fill(code);
      await page.getByRole('button', { name: t.redeem, exact: true }).click();
      await expect(available).toHaveText((before + 25).toFixed(2));
      const entries = page.locator('section[aria-labelledby="wallet-entries-title"]');
      await expect(entries.locator('tbody tr').first()).toContainText(t.redeemed);
      await page.screenshot({ path: `test-results/phone-wallet-${phone}-${lang}.png`, fullPage: true });

      // The notifications: the rental's, which opens its page on the phone.
      await page.getByRole('button', { name: t.userMenu }).click();
      await page.locator('.user-popover').getByRole('link', { name: t.notifications }).click();
      await expect(page).toHaveURL(/\/m\/notifications$/);
      const started = page.locator('.notification-list li', { hasText: t.started }).first();
      await expect(started).toBeVisible();
      await page.screenshot({ path: `test-results/phone-notifications-${phone}-${lang}.png`, fullPage: true });
      await started.getByRole('link', { name: t.started }).click();
      await expect(page).toHaveURL(new RegExp(`/m/app/details\\?id=${inst.id}$`));

      // The session ends (signed out elsewhere) while the wallet is open: the next action goes
      // to the phone's sign-in, and back to the wallet after it.
      await page.goto('/m/wallet');
      await expect(available).not.toHaveText('');
      const token = await page.evaluate(() => localStorage.getItem('token'));
      await ok(await request.post('/api/iam/v1/logout', { headers: { authorization: `Bearer ${token}` } }));
      await page.getByRole('button', { name: t.refresh }).click();
      await expect(page).toHaveURL(/\/m\/auth\/signin\?redirect=%2Fm%2Fwallet$/);
      await submitSignIn(page, renter, { lang });
      await expect(page).toHaveURL(/\/m\/wallet$/);
      await expect(available).toHaveText((before + 25).toFixed(2));

      // The ended filter the desktop list has (issue 39).
      await page.goto(`/m/app?show=ended`);
      await expect(page.getByRole('button', { name: t.ended, exact: true })).toHaveAttribute('aria-pressed', 'true');
      await expect(page.locator('.tab-bar')).toBeVisible();
      // The refused refresh is a 401 the browser logs; nothing else may be.
      expect(consoleErrors.filter((e) => !e.includes('status of 401'))).toEqual([]);
    });
  });
}

/** The console pages whose wide screens must fit narrow ones (ui/src/lib/paths.ts `paths.console`). */
async function overflowing(page, paths, width) {
  const found = [];
  for (const path of paths) {
    await page.goto(path);
    await page.waitForFunction(() => window.__zmHydrated === true);
    // The page's content, not the guard's skeleton.
    await expect(page.locator('.console-main h1').first()).toBeVisible();
    await expect(page.locator('.console-main .skeleton')).toHaveCount(0);
    const wide = await page.evaluate(() => {
      const inner = window.innerWidth;
      // What sticks out, so a failure names it: the innermost elements past the right edge.
      const past = (el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.right > inner + 1;
      };
      const out = [...document.querySelectorAll('body *')].filter((el) => past(el) && ![...el.children].some(past));
      const name = (el) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
      return { scroll: document.scrollingElement.scrollWidth, inner, out: out.slice(0, 4).map(name) };
    });
    if (wide.scroll > wide.inner) found.push(`${path} at ${width}px: ${wide.scroll}px wide (${wide.out.join(', ')})`);
  }
  return found;
}

test('every console page fits 390 and 768 px without sideways scroll (en, zh)', async ({ browser, request }) => {
  test.setTimeout(600_000);
  const s = Date.now();
  const me = `narrow-${s}@example.com`;
  await verifiedAccount(request, me);
  execFileSync(BIN, ['operator', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', me], { env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' } });
  const auth = await apiSession(request, me);
  const box = await fakeBox(request, auth, `Narrow box ${s}`);
  const inst = await ok(await request.post('/api/rmp/v1/apps/install', { headers: auth, data: { app_id: 'grafana', device_id: box.id } }));
  const company = await ok(await request.post('/api/iam/v1/sme', { headers: auth, data: { name: `Narrow Co ${s % 100000}` } }));
  const personal = [
    '/app', `/app/details?id=${inst.id}`, '/app/aicompute', '/devices', '/devices/link', `/devices/details?id=${box.id}`,
    '/devices/zcloud/create', '/friends', '/friends/tags', '/wallet', '/wallet/top-up', '/account', '/account/username',
    '/account/password', '/messages', '/messages?tab=notifications', '/demands-and-offers', '/history',
    '/operator', '/operator/people', '/operator/audit', '/operator/apps', '/operator/settings', '/operator/codes',
  ];
  const admin = ['/company', '/company/allocate', '/company/history'];
  const found = [];
  for (const width of [390, 768]) {
    const context = await browser.newContext({ viewport: { width, height: 844 } });
    const page = await context.newPage();
    for (const lang of ['en', 'zh']) {
      await page.goto(`/auth/signin?language=${lang}`);
      await page.evaluate(() => localStorage.clear());
      await page.goto(`/auth/signin?language=${lang}`);
      await submitSignIn(page, me, { lang });
      await expect(page).toHaveURL(/\/app$/);
      found.push(...(await overflowing(page, personal.map((p) => `${p}${p.includes('?') ? '&' : '?'}language=${lang}`), width)));
      if (width === 390) await page.screenshot({ path: `test-results/narrow-app-${lang}.png`, fullPage: true });
      // The company's pages, in its context (the switcher is in the header's menu here).
      const choose = async (id) => {
        await page.goto('/app');
        await page.locator('.console-header').getByRole('button', { name: lang === 'zh' ? '打开菜单' : 'Open menu' }).click();
        await page.locator('.sidebar-tools select').selectOption(id);
        await expect(page.locator('.console-header .company-switcher select')).toHaveValue(id);
      };
      await choose(company.id);
      found.push(...(await overflowing(page, admin, width)));
      await choose('user');
    }
    // The header's menu opens with the menu, the company switcher, the language and the settings,
    // on the screen; "中文" on one line.
    await page.goto('/wallet?language=zh');
    await page.locator('.console-header').getByRole('button', { name: '打开菜单' }).click();
    const tools = page.locator('.sidebar-tools');
    await expect(tools.getByRole('combobox', { name: '切换企业' })).toBeInViewport();
    await expect(tools.getByRole('button', { name: '中文' })).toBeInViewport();
    const lines = await tools.getByRole('button', { name: '中文' }).evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    });
    expect(lines, `中文 at ${width}px`).toBe(1);
    await page.screenshot({ path: `test-results/narrow-menu-open-${width}.png` });
    await context.close();
  }
  expect(found).toEqual([]);
});
