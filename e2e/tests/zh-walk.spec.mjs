// Every route in Chinese (issue 17, item 11): as a visitor, an individual user, a company admin and
// a member, on desktop and on a phone, the visible text (and the labels a screen reader reads) has
// no run of Latin words except product names, catalogue content and what people typed.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test, expect, expectHydrated, verifiedAccount, apiSession, mailedLink, seedNearbyDevices, signIn } from './fixtures.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

/** Names that stay as they are in Chinese: the product's own and the industry's. */
const PRODUCT_NAMES = [
  'ZMarket', 'Z-APP', 'Z-BOX', 'P-BOX', 'Z-CLOUD', 'Z-SERVER', 'NAS', 'AI', 'GPU', 'CPU', 'SSD', 'ID', 'API', 'SSH', 'EN',
  'JPG', 'JPEG', 'PNG', 'WEBP', 'GIF', 'PDF', 'B', 'KB', 'MB', 'GB', 'TB', 'km', 'Cookie', 'Android', 'iOS', 'Windows', 'macOS', 'Leaflet',
  // Browsers, devices and the box's one-line install (a command and the names it uses).
  'iPhone', 'iPad', 'Safari', 'Chrome', 'Linux', 'Docker', 'NVIDIA', 'systemd', 'root', 'curl', 'fsSL', 'sudo', 'sh',
  // Authenticator apps the two-factor section names (their names in every language).
  'Google', 'Microsoft', 'Authenticator',
];

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

/** Latin words of a text: emails, links and tokens with digits (ids, versions, sizes) left out. */
function latinWords(text) {
  const cleaned = text
    .replace(/\S+@\S+/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/\S*\d\S*/g, ' ');
  // Single letters (a logo's "Z", an avatar's initial, a unit) are not words.
  return (cleaned.match(/[A-Za-z]+(?:[-'][A-Za-z]+)*/g) ?? []).filter((w) => w.length > 1);
}

/** Runs of Latin words (with what separates them) that contain a word outside `allowed`. */
function offending(text, allowed) {
  const runs = [];
  for (const line of text.split('\n')) {
    const cleaned = line.replace(/\S+@\S+/g, ' ').replace(/https?:\/\/\S+/g, ' ').replace(/\S*\d\S*/g, ' ');
    for (const run of cleaned.match(/[A-Za-z]+(?:[-'][A-Za-z]+)*(?:[\s,.:/()]+[A-Za-z]+(?:[-'][A-Za-z]+)*)*/g) ?? []) {
      if (latinWords(run).some((w) => !allowed.has(w))) runs.push(run.trim());
    }
  }
  return runs;
}

/** What a person sees and a screen reader reads: text, labels, placeholders, titles; code aside. */
async function visibleText(page) {
  return page.evaluate(() => {
    const skip = new Set(['SCRIPT', 'STYLE', 'CODE', 'KBD', 'PRE', 'NOSCRIPT', 'TEMPLATE']);
    const out = [document.title];
    const walk = (n) => {
      if (n.nodeType === Node.TEXT_NODE) {
        out.push(n.textContent);
        return;
      }
      // Code, text marked as not to translate, and text marked as another language (the language
      // switcher names English in English) are left out.
      if (n.nodeType !== Node.ELEMENT_NODE || skip.has(n.tagName) || n.getAttribute('translate') === 'no') return;
      if (n.hasAttribute('lang') && n !== document.documentElement && !n.getAttribute('lang').startsWith('zh')) return;
      for (const a of ['placeholder', 'aria-label', 'title', 'alt']) {
        const v = n.getAttribute(a);
        if (v) out.push(v);
      }
      for (const c of n.childNodes) walk(c);
    };
    walk(document.body);
    return out.join('\n');
  });
}

async function settle(page) {
  // A signed-in page keeps its event stream open (the social issue's SSE), so the network never
  // idles there: wait for it a little, then for the skeletons to go.
  await page.waitForLoadState('networkidle', { timeout: 2500 }).catch(() => undefined);
  await page.waitForFunction(() => !document.querySelector('.skeleton, .page-loading'), null, { timeout: 3000 }).catch(() => undefined);
}

async function walk(page, paths, allowed, found) {
  for (const path of paths) {
    await page.goto(path);
    await settle(page);
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh');
    const runs = offending(await visibleText(page), allowed);
    if (runs.length) found.push(`${path}: ${[...new Set(runs)].join(' | ')}`);
  }
}

test('every route in Chinese has no untranslated Latin words', async ({ browser, request }) => {
  test.setTimeout(480_000);
  // What the pages show: the catalogue (its Chinese texts are content, product names included)...
  const allowed = new Set(PRODUCT_NAMES);
  const catalogue = await (await request.get('/api/ebs/v1/market/search?limit=100', { headers: { 'accept-language': 'zh' } })).json();
  for (const app of catalogue.data.items) {
    for (const v of [app.name, app.summary, app.description, app.publisher]) latinWords(v ?? '').forEach((w) => allowed.add(w));
  }
  const firstApp = catalogue.data.items[0].id;
  // Device names are what their owners typed (other tests of the run seed some too).
  const nearby = await (await request.get('/api/ebs/v2/nearby?lat=0&lng=0&limit=100')).json();
  for (const d of nearby.data.items) {
    // Device and GPU names are hardware content ("RTX 4090"), as typed or reported.
    const gpus = Array.isArray(d.gpus) ? d.gpus.map((g) => g.name) : [String(d.gpus ?? '')];
    for (const v of [d.name, ...gpus]) latinWords(v).forEach((w) => allowed.add(w));
  }
  // ...and devices, a company and people with Chinese names.
  const [device] = await seedNearbyDevices(request, [{ name: '深圳一号机', type: 'Z-BOX', lat: 22.55, lng: 114.07, price_per_hour: 120 }]);
  const stamp = Date.now();
  const user = `walk-user-${stamp}@example.com`;
  const member = `walk-member-${stamp}@example.com`;
  await verifiedAccount(request, user);
  await verifiedAccount(request, member);
  const personal = await apiSession(request, user);
  await request.put('/api/iam/v1/account/profile/info', { headers: personal, data: { name: '张三丰' } });
  const company = await (await request.post('/api/iam/v1/sme', { headers: personal, data: { name: '算力合作社' } })).json();
  const sw = await (await request.post('/api/iam/v1/switch', { headers: personal, data: { smeId: company.data.id } })).json();
  const admin = { authorization: `Bearer ${sw.data.token}` };
  await request.post('/api/iam/v1/sme/invite', { headers: admin, data: { email: member } });
  const join = await mailedLink(member, /\/iam\/v1\/sme\/join\?code=[A-Za-z0-9_-]+/);
  const code = join.split('code=')[1];
  expect((await request.post('/api/iam/v1/sme/join', { headers: await apiSession(request, member), data: { code, accept: true } })).status()).toBe(200);

  const found = [];
  const visitorPaths = [
    '/market', '/market?category=AI', '/market/more', `/market/details?id=${firstApp}`, '/nearby', `/nearby/details?id=${device.id}`,
    '/nearby/map', '/on-demand', '/on-demand/place-an-order', '/auth/signin', '/auth/signup', '/check-email', '/email-verified',
    '/forgot-password', '/reset-password', '/403', '/404', '/500', '/no-such-page', '/terms-of-use', '/privacy-policy', '/guide',
    '/m/download',
  ];
  const desktop = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await desktop.newPage();
  await page.goto('/market?language=zh');
  await expectHydrated(page);
  await walk(page, visitorPaths, allowed, found);

  // An individual user's console; they run the market too (`zmarket operator grant`): its pages.
  execFileSync(BIN, ['operator', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', user], { env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' } });
  await signIn(page, user, { lang: 'zh' });
  await walk(page, [
    '/app', '/devices', '/devices/link', '/devices/zcloud/create', '/friends', '/wallet', '/account', '/account/username',
    '/account/password', '/messages', '/demands-and-offers', '/history', '/messages?tab=notifications', '/friends/tags', '/company-email',
    '/iam/v1/sme/join?code=nope', '/operator', '/operator/people', '/operator/audit',
  ], allowed, found);
  // A company administrator's.
  await page.goto('/app');
  await page.getByRole('combobox', { name: '切换企业' }).selectOption({ label: '算力合作社' });
  await expect(page.getByRole('combobox', { name: '切换企业' }).locator('option:checked')).toHaveText('算力合作社');
  await walk(page, ['/app', '/devices', '/company', '/company/allocate', '/company/history', '/account'], allowed, found);
  await page.screenshot({ path: 'test-results/zh-walk-admin.png', fullPage: true });
  await desktop.close();

  // A member's.
  const memberContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const memberPage = await memberContext.newPage();
  await signIn(memberPage, member, { lang: 'zh' });
  await memberPage.getByRole('combobox', { name: '切换企业' }).selectOption({ label: '算力合作社' });
  await expect(memberPage).toHaveURL(/\/app$/);
  await walk(memberPage, ['/app', '/account', '/devices'], allowed, found);
  await memberContext.close();

  // A phone.
  const phone = await browser.newContext({ userAgent: IPHONE, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const phonePage = await phone.newPage();
  await phonePage.goto('/m/market?language=zh');
  await expectHydrated(phonePage);
  await walk(phonePage, [
    '/m/market', '/m/market/more', `/m/market/details?id=${firstApp}`, '/m/nearby', `/m/nearby/details?id=${device.id}`,
    '/m/download', '/m/guide', '/check-email', '/email-verified',
  ], allowed, found);
  await phonePage.screenshot({ path: 'test-results/zh-walk-phone.png', fullPage: true });
  await phone.close();

  expect(found, found.join('\n')).toEqual([]);
});
