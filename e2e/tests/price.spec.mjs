// One price (issue 24): the market card shows the cheapest online offer that fits and how many
// there are, the details page lists the offers, the Rent dialog charges exactly the offer chosen
// and says so, and the wallet then holds exactly that; "no offers now" when no box fits. In
// English and in Chinese, desktop and phone. Offers a renter can choose from (issue 39): each
// offer's box in figures, the dialog's filter and sort; the nearby page of a box rents from there.
import { test, expect, expectHydrated, verifiedAccount, apiSession, signIn } from './fixtures.mjs';

const GIB = 2 ** 30;
const SPEC = { cpu_cores: 8, memory_bytes: 16 * GIB, disk_bytes: 512 * GIB, gpus: [] };

/** Two boxes of one owner, offered for rent at 1.20 and 2.00 coins an hour (no GPU). */
async function offeredBoxes(request) {
  const email = `price-owner-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  const headers = await apiSession(request, email);
  const boxes = [];
  for (const [name, price] of [['Price box A', 120], ['Price box B', 200]]) {
    const reg = await request.post('/api/agent/v1/register', { data: { type: 'Z-BOX', name, spec: SPEC } });
    expect(reg.status()).toBe(200);
    const { device_id, device_secret, pairing_code } = (await reg.json()).data;
    boxes.push({ id: device_id, secret: device_secret, name, price });
    await beat(request, device_secret);
    const calls = [
      ['post', '/api/ebs/v2/devices/link', { device_id, pairing_code }],
      ['put', `/api/ebs/v2/devices/${device_id}`, { name }],
      ['put', `/api/ebs/v2/devices/${device_id}/sharing`, { mode: 'manual', rentable: true, price_per_hour: price }],
    ];
    // Box A has a place (near the map's centre): it is on the nearby pages and has a distance.
    if (name === 'Price box A') calls.push(['put', `/api/ebs/v2/devices/${device_id}/location`, { lat: 22.55, lng: 114.06 }]);
    for (const [method, url, data] of calls) {
      const res = await request[method](url, { headers, data });
      expect(res.status(), `${method} ${url}: ${await res.text()}`).toBe(200);
    }
  }
  return boxes;
}

async function beat(request, secret) {
  const hb = await request.post('/api/agent/v1/heartbeat', {
    headers: { authorization: `Bearer ${secret}` },
    data: { spec: SPEC, metrics: { cpu_percent: 5, memory_used_bytes: GIB, disk_used_bytes: 8 * GIB }, acks: [] },
  });
  expect(hb.status()).toBe(200);
}

/** Waits until the market's answer for `id` shows `price` (it follows device changes by itself). */
async function marketShows(request, id, price) {
  await expect
    .poll(async () => (await (await request.get(`/api/ebs/v1/market/applications/${id}`)).json()).data.price_per_hour, { timeout: 15_000 })
    .toEqual(price);
}

let boxes;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ request }) => {
  boxes = await offeredBoxes(request);
});

test.beforeEach(async ({ request }) => {
  // The boxes keep reporting (they would be offline after 90 s of silence).
  for (const b of boxes) await beat(request, b.secret);
});

const LANGS = {
  en: {
    app: 'factorio-server',
    name: 'Factorio Headless Server',
    card: 'from 1.20 coins/h · 2 offers',
    none: 'no offers now',
    offersTitle: 'Offers',
    offer: '1.20 coins / hour',
    rent: 'Rent',
    charge: 'Held now: 1.20 coins. While the app runs on Price box A, 1.20 coins are charged per hour, never more.',
    total: '1.20 coins',
    facts: /^8 vCPU · 16\.00 GB memory · 512\.00 GB disk · New box: uptime is measured after its first day · \d+ km away$/,
    factsB: '8 vCPU · 16.00 GB memory · 512.00 GB disk · New box: uptime is measured after its first day',
    gpuModel: 'GPU model',
    noneMatch: 'No box matches these filters',
    sort: 'Sort by',
    viaNearby: false,
  },
  zh: {
    app: 'terraria-server',
    name: 'Terraria 服务器',
    card: '1.20 币/小时起 · 2 个报价',
    none: '暂无报价',
    offersTitle: '报价',
    offer: '1.20 币 / 小时',
    rent: '租用',
    charge: '现在冻结 1.20 币。应用在 Price box A 上运行期间，每小时收取 1.20 币，不会多收。',
    total: '1.20 币',
    facts: /^8 核 CPU · 内存 16\.00 GB · 磁盘 512\.00 GB · 新设备：首日之后开始统计在线率 · 距离 \d+ km$/,
    factsB: '8 核 CPU · 内存 16.00 GB · 磁盘 512.00 GB · 新设备：首日之后开始统计在线率',
    gpuModel: 'GPU 型号',
    noneMatch: '没有符合筛选条件的设备',
    sort: '排序',
    spec: '配置',
    rentBox: '租用这台设备',
    viaNearby: true,
  },
};

for (const [lang, t] of Object.entries(LANGS)) {
  test(`${lang}: the card price equals the dialog price equals the hold`, async ({ page, request, consoleErrors }) => {
    await marketShows(request, t.app, { from: 120, offers: 2 });

    // Signed out: the card and the details page (desktop).
    await page.goto(`/market/more?keyword=${encodeURIComponent(t.app)}&language=${lang}`);
    await expectHydrated(page);
    const card = page.locator('.app-card', { hasText: t.name });
    await expect(card.locator('.price')).toHaveText(t.card);
    await page.goto(`/market/details?id=${t.app}&language=${lang}`);
    await expectHydrated(page);
    await expect(page.getByTestId('app-price')).toHaveText(t.card);
    await expect(page.getByRole('heading', { name: t.offersTitle })).toBeVisible();
    const offers = page.getByTestId('offers').locator('li');
    await expect(offers).toHaveCount(2);
    await expect(offers.nth(0)).toContainText('Price box A');
    await expect(offers.nth(0)).toContainText(t.offer);
    await page.screenshot({ path: `test-results/price-details-${lang}.png`, fullPage: true });

    // The phone card and details say the same.
    await page.goto(`/m/market/details?id=${t.app}&language=${lang}`);
    await expect(page.getByTestId('app-price')).toHaveText(t.card);
    await expect(page.getByTestId('offers').locator('li')).toHaveCount(2);

    // A renter: the dialog picks the cheapest offer, says what is held and charged, and the
    // wallet holds exactly that.
    const renter = `price-renter-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, renter);
    await signIn(page, renter, { redirect: '/wallet', fresh: true });
    if (t.viaNearby) {
      // From the box's nearby page: its spec, then Rent with the app picked opens the market's
      // Rent dialog on this box.
      await page.goto(`/nearby/details?id=${boxes[0].id}&language=${lang}`);
      await expectHydrated(page);
      await expect(page.getByTestId('nearby-spec')).toHaveText('8 核 CPU · 内存 16.00 GB · 磁盘 512.00 GB');
      const rentBox = page.getByRole('region', { name: t.rentBox });
      await rentBox.getByRole('combobox').selectOption({ label: t.name });
      await page.screenshot({ path: `test-results/price-nearby-rent-${lang}.png`, fullPage: true });
      await rentBox.getByRole('button', { name: t.rent, exact: true }).click();
      await expect(page).toHaveURL(new RegExp(`/market/details\\?id=${t.app}&do=rent&device=${boxes[0].id}`));
    } else {
      await page.goto(`/market/details?id=${t.app}&language=${lang}`);
      await expectHydrated(page);
      await page.locator('.details-buttons').getByRole('button', { name: t.rent, exact: true }).click();
    }
    const dialog = page.getByRole('dialog');
    await expect(dialog.locator(`[data-device="${boxes[0].id}"] input`)).toBeChecked();
    // Each offer says what its box is, measured by the market; the filters narrow, the sort orders.
    const offerA = dialog.locator(`[data-device="${boxes[0].id}"]`);
    await expect(offerA.getByTestId('offer-facts')).toHaveText(t.facts);
    await expect(dialog.locator(`[data-device="${boxes[1].id}"]`).getByTestId('offer-facts')).toHaveText(t.factsB);
    await dialog.getByLabel(t.gpuModel).fill('H200');
    await expect(dialog.getByText(t.noneMatch)).toBeVisible();
    await dialog.getByLabel(t.gpuModel).fill('');
    await expect(offerA.locator('input')).toBeChecked();
    await dialog.getByLabel(t.sort).selectOption('distance');
    await expect(dialog.locator('[data-device]').first()).toHaveAttribute('data-device', boxes[0].id);
    await page.screenshot({ path: `test-results/price-offers-${lang}.png` });
    await expect(dialog.getByTestId('rent-total')).toHaveText(t.total);
    await expect(dialog.getByTestId('rent-charge')).toHaveText(t.charge);
    await page.screenshot({ path: `test-results/price-rent-dialog-${lang}.png` });
    await dialog.getByRole('button', { name: t.rent, exact: true }).click();
    await expect(page).toHaveURL(/\/app\/details\?id=/);
    await page.goto(`/wallet?language=${lang}`);
    await expect(page.locator('[data-figure="held"] .figure-value')).toHaveText('1.20');
    await page.screenshot({ path: `test-results/price-wallet-${lang}.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  });

  test(`${lang}: no box fits: no offers now`, async ({ page, request, consoleErrors }) => {
    // Ollama needs a GPU; neither box has one.
    await marketShows(request, 'ollama', { from: null, offers: 0 });
    await page.goto(`/market/more?keyword=ollama&language=${lang}`);
    await expectHydrated(page);
    const card = page.locator('.app-card').filter({ has: page.getByRole('heading', { name: 'Ollama', exact: true }) });
    await expect(card.locator('.price')).toHaveText(t.none);
    await page.goto(`/m/market/details?id=ollama&language=${lang}`);
    await expect(page.getByTestId('app-price')).toHaveText(t.none);
    await expect(page.getByTestId('offers')).toHaveCount(0);
    await page.screenshot({ path: `test-results/price-none-phone-${lang}.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
}
