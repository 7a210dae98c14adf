// Market and nearby map pages in real Chromium: browsing, searching, details, the map, in English
// and Chinese, on a desktop and on a phone. Every test fails on console errors (hydration
// mismatches are logged as errors by the client) and checks that nothing left the machine.
import { test, expect, expectHydrated, seedNearbyDevices } from './fixtures.mjs';

const SHOTS = 'test-results/screens';
const IPHONE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

/** Records every request that is not for the server under test. */
function watchOutside(page, baseURL) {
  const outside = [];
  page.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(baseURL) && !url.startsWith('data:') && !url.startsWith('blob:')) outside.push(url);
  });
  return outside;
}

// Real shared devices for the nearby pages, put there through the agent protocol and the device
// API (fixtures.mjs): a dense group in Shenzhen, two in Hong Kong, one in Beijing. The server's
// default map centre is Shenzhen (config.toml [map]).
const DEVICES = [
  ...Array.from({ length: 6 }, (_, i) => ({
    name: `Shenzhen box ${i + 1}`,
    type: 'Z-BOX',
    lat: 22.54 + i * 0.01,
    lng: 114.05 + i * 0.01,
    price_per_hour: 300,
    gpus: [{ name: 'RTX 4090', passthrough: true, vram: 25769803776 }],
  })),
  { name: 'Hong Kong box 1', type: 'P-BOX', lat: 22.32, lng: 114.17, price_per_hour: 200 },
  { name: 'Hong Kong box 2', type: 'P-BOX', lat: 22.28, lng: 114.16, price_per_hour: 200 },
  { name: 'Beijing server', type: 'server group', lat: 39.9, lng: 116.4, price_per_hour: 900 },
];

/**
 * The seeded devices, seeded once per server (the spec file has its own): a worker restarted after
 * a failed test finds them on the nearby list instead of seeding twice.
 */
async function nearbyDevices(request) {
  const res = await request.get('/api/ebs/v2/nearby?limit=100');
  const listed = (await res.json()).data.items;
  if (DEVICES.every((d) => listed.some((l) => l.name === d.name))) {
    return DEVICES.map((d) => ({ ...d, id: listed.find((l) => l.name === d.name).id }));
  }
  return seedNearbyDevices(request, DEVICES);
}

const idOf = (devices, name) => devices.find((d) => d.name === name).id;

test.describe('desktop, English', () => {
  test.use({ locale: 'en-US', viewport: { width: 1280, height: 860 } });

  test('browse: server-rendered list, categories, more, load more', async ({ page, consoleErrors, baseURL }) => {
    const outside = watchOutside(page, baseURL);
    const res = await page.goto('/market');
    expect(res.status()).toBe(200);
    // The first HTML already holds the apps.
    const html = await res.text();
    expect(html).toContain('Ollama');
    expect(html).toContain('Open WebUI');
    await expectHydrated(page);
    await expect(page).toHaveTitle('Explore Market - ZMarket');
    // Top picks (10) above the first page of all apps (24).
    await expect(page.locator('.top-picks .app-card')).toHaveCount(10);
    await expect(page.locator('.app-card')).toHaveCount(34);
    await page.screenshot({ path: `${SHOTS}/market-en.png`, fullPage: false });

    await page.getByRole('link', { name: 'Top Picks', exact: true }).click();
    await expect(page).toHaveURL(/category=top_picks/);
    await expect(page.locator('.app-card')).toHaveCount(10);

    await page.getByRole('link', { name: 'Game', exact: true }).click();
    await expect(page.locator('.app-card')).toHaveCount(7);
    await expect(page.locator('.app-card').first()).toContainText('Server');

    await page.getByRole('link', { name: 'All', exact: true }).click();
    await page.locator('.section-head').last().getByRole('link', { name: 'See all apps' }).click();
    await expect(page).toHaveURL(/\/market\/more/);
    await expect(page.locator('.app-card')).toHaveCount(24);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect(page.locator('.app-card')).toHaveCount(48);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect(page.locator('.app-card')).toHaveCount(50);
    await expect(page.getByRole('button', { name: 'Load more' })).toHaveCount(0);
    expect(consoleErrors).toEqual([]);
    expect(outside).toEqual([]);
  });

  test('search, filter and open the details', async ({ page, consoleErrors }) => {
    await page.goto('/market');
    await expectHydrated(page);
    await page.getByRole('searchbox', { name: 'Search apps' }).fill('ollama');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect(page).toHaveURL(/\/market\/more\?keyword=ollama/);
    await expect(page.locator('.app-card').first()).toContainText('Ollama');

    // Filters of the more page.
    await page.goto('/market/more?keyword=media');
    await expectHydrated(page);
    await expect(page.locator('.app-card')).toHaveCount(2);
    await page.getByLabel('Type', { exact: true }).selectOption('NAS');
    await page.getByLabel('Performance').selectOption('standard');
    await expect(page).toHaveURL(/display_type=NAS/);
    await expect(page.locator('.app-card')).toHaveCount(2);
    await page.getByLabel('Performance').selectOption('basic');
    await expect(page.getByText('No results')).toBeVisible();

    await page.goto('/market/more?keyword=ollama');
    await page.locator('.app-card').first().click();
    await expect(page).toHaveURL(/\/market\/details\?id=ollama/);
    await expect(page.getByRole('heading', { level: 1, name: 'Ollama' })).toBeVisible();
    await expect(page.getByText('4 Cores CPU, 16 GB Memory, 64 GB SSD Disk, GPU*1')).toBeVisible();
    await expect(page.getByText('0.5.7')).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/details-en.png` });
    expect(consoleErrors).toEqual([]);
  });

  test('details are server-rendered, an unknown app is a 404', async ({ page, consoleErrors }) => {
    const res = await page.goto('/market/details?id=libreoffice');
    expect(res.status()).toBe(200);
    await expectHydrated(page);
    await expect(page.getByRole('heading', { level: 1, name: 'LibreOffice' })).toBeVisible();
    await expect(page.getByText(/No GPU/)).toBeVisible();
    const missing = await page.goto('/market/details?id=no-such-app');
    expect(missing.status()).toBe(404);
    await expectHydrated(page);
    await expect(page).toHaveTitle('Page Not Found - ZMarket');
    await expect(page.getByText('Sorry, the page you visited does not exist')).toBeVisible();
    expect(consoleErrors.filter((e) => !/404/.test(e))).toEqual([]);
  });

  test('nearby: real shared devices, nearest first, server-rendered, with details', async ({ page, request, consoleErrors }) => {
    const devices = await nearbyDevices(request);
    const res = await page.goto('/nearby');
    expect(res.status()).toBe(200);
    const html = await res.text();
    expect(html).toContain('Shenzhen box 1');
    expect(html).toContain('Beijing server');
    await expectHydrated(page);
    const names = await page.locator('.device-card h3').allTextContents();
    expect(names).toHaveLength(DEVICES.length);
    // Nearest first from the default centre: Shenzhen, then Hong Kong, then Beijing.
    expect(names.slice(6)).toEqual(['Hong Kong box 1', 'Hong Kong box 2', 'Beijing server']);
    await expect(page.locator('.device-card', { hasText: 'Beijing server' })).toContainText(/1,9\d\d km/);
    await page.screenshot({ path: `${SHOTS}/nearby-en.png` });
    await page.locator('.device-card', { hasText: 'Shenzhen box 1' }).click();
    await expect(page).toHaveURL(new RegExp(`/nearby/details\\?id=${idOf(devices, 'Shenzhen box 1')}$`));
    await expect(page.getByRole('heading', { level: 1, name: 'Shenzhen box 1' })).toBeVisible();
    await expect(page.getByText(/RTX 4090/).first()).toBeVisible();
    expect(consoleErrors).toEqual([]);
  });

  test('the map draws the offline world with clustered markers and opens a device', async ({ page, request, consoleErrors, baseURL }) => {
    const devices = await nearbyDevices(request);
    const outside = watchOutside(page, baseURL);
    // The world base map comes from /assets/map/world.json (drawn on a canvas), then the markers.
    const world = page.waitForResponse((r) => r.url().endsWith('/assets/map/world.json'));
    const res = await page.goto('/nearby/map');
    expect(res.status()).toBe(200);
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await expectHydrated(page);
    await expect(page.locator('.leaflet-container')).toBeVisible();
    expect((await world).status()).toBe(200);
    await expect(page.locator('.leaflet-overlay-pane canvas')).toHaveCount(1);
    await expect(page.locator('.map-cluster').first()).toBeVisible();
    const clusterText = await page.locator('.map-cluster').allTextContents();
    expect(clusterText.map(Number).reduce((a, b) => a + b, 0) + (await page.locator('.map-marker').count())).toBe(DEVICES.length);
    await expect(page.getByText('Devices on the map: 9')).toBeVisible();
    // Place names (issue 44): at the fitted zoom the countries that fit and the big cities; Macau,
    // beside the markers of Hong Kong and Shenzhen, only once zoomed in (no label under a marker).
    const label = (kind, name) => page.locator(`.map-label-${kind}`, { hasText: new RegExp(`^${name}$`) });
    await expect(label('country', 'China')).toBeVisible();
    await expect(label('city', 'Shanghai')).toBeVisible();
    await expect(label('city', 'Macau')).toHaveCount(0);
    await expect(page.locator('.leaflet-control-attribution')).toHaveText('© GeoNames (CC BY 4.0) · Natural Earth · Unicode CLDR');
    await page.screenshot({ path: `${SHOTS}/map-en.png` });

    // Two styles.
    await page.getByRole('button', { name: 'Dark' }).click();
    await expect(page.locator('.map-view')).toHaveClass(/map-style-dark/);
    await page.screenshot({ path: `${SHOTS}/map-dark-en.png` });
    await page.getByRole('button', { name: 'Light' }).click();

    // A single device: its marker opens the details.
    await page.locator('.map-marker[title="Beijing server"]').click();
    await expect(page).toHaveURL(new RegExp(`/nearby/details\\?id=${idOf(devices, 'Beijing server')}$`));

    // A cluster zooms in; at the closest zoom, devices sharing a spot are listed in a popup.
    await page.goto('/nearby/map');
    await expectHydrated(page);
    await expect(page.locator('.map-cluster').first()).toBeVisible();
    for (let i = 0; i < 5 && !(await page.locator('.leaflet-popup').count()); i++) {
      const counts = (await page.locator('.map-cluster').allTextContents()).map(Number);
      await page.locator('.map-cluster').nth(counts.indexOf(Math.max(...counts))).click();
      await page.waitForTimeout(500); // the zoom animation
    }
    await expect(page.locator('.leaflet-popup')).toBeVisible();
    await expect(label('city', 'Macau')).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/map-zoomed-en.png` });
    const picked = await page.locator('.leaflet-popup a').first().textContent();
    expect(picked).toMatch(/^Shenzhen box /);
    await page.locator('.leaflet-popup a').first().click();
    await expect(page).toHaveURL(new RegExp(`/nearby/details\\?id=${idOf(devices, picked)}$`));
    expect(consoleErrors).toEqual([]);
    expect(outside).toEqual([]);
  });
});

test.describe('desktop, Chinese', () => {
  test.use({ locale: 'zh-CN', viewport: { width: 1280, height: 860 } });

  test('browse, search in Chinese, details and the map', async ({ page, request, consoleErrors, baseURL }) => {
    await nearbyDevices(request);
    const outside = watchOutside(page, baseURL);
    const res = await page.goto('/market');
    expect(await res.text()).toContain('探索市场');
    await expectHydrated(page);
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh');
    await expect(page).toHaveTitle('探索市场 - ZMarket');
    await page.screenshot({ path: `${SHOTS}/market-zh.png` });
    await page.getByRole('link', { name: '游戏', exact: true }).click();
    // The category view replaces the home's sections: wait for its seven cards, then look for one.
    await expect(page.locator('.app-card')).toHaveCount(7);
    await expect(page.locator('.app-card', { hasText: 'Minecraft Java 版服务器' })).toHaveCount(1);

    await page.getByRole('searchbox', { name: '搜索应用' }).fill('幻兽帕鲁');
    await page.getByRole('button', { name: '搜索' }).click();
    await expect(page.locator('.app-card')).toHaveCount(1);
    await page.locator('.app-card').first().click();
    await expect(page.getByRole('heading', { level: 1, name: 'Palworld（幻兽帕鲁）专用服务器' })).toBeVisible();
    await expect(page.getByText(/核 CPU, .* GB 内存, .* GB SSD 硬盘/)).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/details-zh.png` });

    // English keywords find apps in a Chinese page too.
    await page.goto('/market/more?keyword=JELLYFIN');
    await expectHydrated(page);
    await expect(page.locator('.app-card')).toHaveCount(1);

    await page.goto('/nearby/map');
    await expectHydrated(page);
    await expect(page.getByRole('button', { name: '深色' })).toBeVisible();
    await expect(page.locator('.map-cluster').first()).toBeVisible();
    // Place names in Chinese; Macau's only closer in.
    const label = (kind, name) => page.locator(`.map-label-${kind}`, { hasText: new RegExp(`^${name}$`) });
    await expect(label('country', '中国')).toBeVisible();
    await expect(label('city', '上海')).toBeVisible();
    await expect(label('city', '澳门')).toHaveCount(0);
    await page.screenshot({ path: `${SHOTS}/map-zh.png` });
    await page.getByRole('button', { name: '深色' }).click();
    // The biggest cluster (the Shenzhen boxes) zooms in to them.
    const counts = (await page.locator('.map-cluster').allTextContents()).map(Number);
    await page.locator('.map-cluster').nth(counts.indexOf(Math.max(...counts))).click();
    await expect(label('city', '澳门')).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/map-zoomed-dark-zh.png` });
    expect(consoleErrors).toEqual([]);
    expect(outside).toEqual([]);
  });
});

test.describe('phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, userAgent: IPHONE_UA, isMobile: true, hasTouch: true });

  for (const [locale, lang] of [['en-US', 'en'], ['zh-CN', 'zh']]) {
    test(`mobile market and nearby in ${lang}: redirect, browse, search, details`, async ({ browser, request, baseURL }) => {
      const context = await browser.newContext({
        locale,
        viewport: { width: 390, height: 844 },
        userAgent: IPHONE_UA,
        isMobile: true,
        hasTouch: true,
      });
      const page = await context.newPage();
      const errors = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(String(e)));
      const outside = watchOutside(page, baseURL);

      await page.goto('/market');
      await expect(page).toHaveURL(/\/m\/market$/);
      await expectHydrated(page);
      await expect(page.locator('.tab-bar')).toBeVisible();
      await expect(page.locator('.app-card')).toHaveCount(34);
      await expect(page.locator('.app-card').first()).toContainText('Ollama');
      await page.screenshot({ path: `${SHOTS}/m-market-${lang}.png` });

      const search = lang === 'zh' ? '搜索应用' : 'Search apps';
      await page.getByRole('searchbox', { name: search }).fill(lang === 'zh' ? '媒体' : 'media');
      await page.getByRole('searchbox', { name: search }).press('Enter');
      await expect(page).toHaveURL(/\/m\/market\/more\?keyword=/);
      await expect(page.locator('.app-card')).toHaveCount(2);
      await page.locator('.app-card').first().click();
      await expect(page).toHaveURL(/\/m\/market\/details\?id=/);
      await expect(page.locator('h1')).toContainText(/Jellyfin|Plex/);
      await page.screenshot({ path: `${SHOTS}/m-details-${lang}.png` });

      const missing = await page.goto('/m/market/details?id=nope');
      expect(missing.status()).toBe(404);
      await expectHydrated(page);

      // Nearby on the phone: the real shared devices, nearest first, and one's details. The map
      // is a desktop page (a phone is sent to /m/market, docs/product.md §2), so the list offers no link;
      // the desktop list itself sends a phone to its phone twin (issue 26).
      const devices = await nearbyDevices(request);
      const nearby = await page.goto('/nearby');
      expect(nearby.status()).toBe(200);
      await expect(page).toHaveURL(/\/m\/nearby$/);
      await page.goto('/nearby/map');
      await expect(page).toHaveURL(/\/m\/market$/);
      await page.goto('/m/nearby');
      await expectHydrated(page);
      const names = await page.locator('.device-card h3').allTextContents();
      expect(names.slice(-3)).toEqual(['Hong Kong box 1', 'Hong Kong box 2', 'Beijing server']);
      await expect(page.getByRole('link', { name: lang === 'zh' ? '地图' : 'Map' })).toHaveCount(0);
      await page.screenshot({ path: `${SHOTS}/m-nearby-${lang}.png` });
      await page.locator('.device-card', { hasText: 'Beijing server' }).click();
      await expect(page).toHaveURL(new RegExp(`/m/nearby/details\\?id=${idOf(devices, 'Beijing server')}$`));
      await expect(page.getByRole('heading', { level: 1, name: 'Beijing server' })).toBeVisible();
      await page.screenshot({ path: `${SHOTS}/m-nearby-details-${lang}.png` });
      expect(errors.filter((e) => !/404/.test(e))).toEqual([]);
      expect(outside).toEqual([]);
      await context.close();
    });
  }
});

test.describe('narrow screen, desktop browser', () => {
  test.use({ locale: 'zh-CN', viewport: { width: 390, height: 844 } });

  test('the map fits a phone-sized window', async ({ page, request, consoleErrors, baseURL }) => {
    await nearbyDevices(request);
    const outside = watchOutside(page, baseURL);
    await page.goto('/nearby/map');
    await expectHydrated(page);
    await expect(page.locator('.leaflet-container')).toBeVisible();
    await expect(page.locator('.map-cluster').first()).toBeVisible();
    const box = await page.locator('.leaflet-container').boundingBox();
    expect(box.width).toBeLessThanOrEqual(390);
    expect(box.height).toBeGreaterThan(200);
    await expect(page.locator('.map-label-country', { hasText: /^中国$/ })).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/map-narrow-zh.png` });
    expect(consoleErrors).toEqual([]);
    expect(outside).toEqual([]);
  });
});

test('on-demand pages are public', async ({ page, consoleErrors }) => {
  const res = await page.goto('/on-demand');
  expect(res.status()).toBe(200);
  await expectHydrated(page);
  await expect(page).toHaveURL(/\/on-demand$/);
  await page.getByRole('link', { name: 'Place an Order' }).first().click();
  await expect(page).toHaveURL(/\/on-demand\/place-an-order$/);
  await expect(page.locator('form')).toBeVisible();
  expect(consoleErrors).toEqual([]);
});
