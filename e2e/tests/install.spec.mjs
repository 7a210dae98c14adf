// A box in one line (issue 41): the bind page shows the install line with its pairing code and
// a Copy button, then waits for the box; a box registering with that code (as install.sh's agent
// does) appears on the page and one press binds it. In English and Chinese. The phone's download
// page offers "Add to home screen" with the iOS and Android steps.
import { test, expect, verifiedAccount, signIn, expectHydrated } from './fixtures.mjs';

const TEXT = {
  en: { copy: 'Copy', copied: 'Copied', waiting: 'Waiting for the box to appear…', ready: 'is ready.', bind: 'Bind', title: 'Set up a box in one line' },
  zh: { copy: '复制', copied: '已复制', waiting: '正在等待盒子出现…', ready: '已就绪。', bind: '绑定', title: '一行命令装好盒子' },
};

for (const lang of ['en', 'zh']) {
  test(`the bind page shows the one line, waits for the box and binds it (${lang})`, async ({ page, request, baseURL, context, consoleErrors }) => {
    const t = TEXT[lang];
    const email = `install-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, email);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, email, { lang, redirect: '/devices/link' });
    await expectHydrated(page);

    const card = page.locator('[data-install-line]');
    await expect(card.getByRole('heading', { name: t.title })).toBeVisible();
    const line = card.locator('.copy-line code');
    await expect(line).toHaveText(new RegExp(`^curl -fsSL '${baseURL.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/install\\.sh\\?code=[2-9A-HJKMNP-Z]{8}' \\| sudo sh$`));
    const text = await line.textContent();
    const code = text.match(/code=([2-9A-HJKMNP-Z]{8})/)[1];
    await expect(card.getByRole('status')).toHaveText(t.waiting);

    // Copy puts the line on the clipboard.
    await card.getByRole('button', { name: new RegExp(`^${t.copy}`) }).click();
    await expect(card.getByRole('button', { name: new RegExp(`^${t.copy}`) })).toContainText(t.copied);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(text);
    await page.screenshot({ path: `test-results/install-line-${lang}.png`, fullPage: true });

    // The script the line fetches names this market and carries the code.
    const script = await (await request.get(`/install.sh?code=${code}`)).text();
    expect(script).toContain(`PAIRING='${code}'`);

    // The box registers with the page's code (what the installed agent does): the page finds it.
    const spec = { cpu_cores: 8, memory_bytes: 16e9, disk_bytes: 5e11, gpus: [] };
    const reg = await request.post('/api/agent/v1/register', { data: { type: 'Z-BOX', name: `garage ${lang}`, spec, pairing_code: code } });
    expect(reg.status()).toBe(200);
    const { device_id: id } = (await reg.json()).data;
    await expect(card.getByRole('status')).toContainText(`garage ${lang}`);
    await expect(card.getByRole('status')).toContainText(id);
    await expect(card.getByRole('status')).toContainText(t.ready);
    await page.screenshot({ path: `test-results/install-found-${lang}.png`, fullPage: true });
    await card.getByRole('button', { name: t.bind, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`/devices/details\\?id=${id}`));
    // The page's wait asks every 3 s and is answered `data: null` until the box has registered:
    // nothing is logged.
    expect(consoleErrors).toEqual([]);
  });
}

test('the phone download page offers Add to home screen (en, zh)', async ({ browser, baseURL }) => {
  const context = await browser.newContext({
    baseURL,
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
    viewport: { width: 390, height: 844 },
  });
  const page = await context.newPage();
  for (const [lang, title, ios, android] of [
    ['en', 'Add to home screen', 'Add to Home Screen', 'Install app'],
    ['zh', '添加到主屏幕', '点按“分享”', '安装应用'],
  ]) {
    await page.goto(`/m/download?language=${lang}`);
    await expectHydrated(page);
    const card = page.locator('[data-home-screen]');
    await expect(card.getByRole('heading', { name: title })).toBeVisible();
    await expect(card).toContainText(ios);
    await expect(card).toContainText(android);
    await expect(page.locator('link[rel="manifest"]')).toHaveAttribute('href', '/manifest.webmanifest');
    await page.screenshot({ path: `test-results/install-home-screen-${lang}.png`, fullPage: true });
  }
  await context.close();
});
