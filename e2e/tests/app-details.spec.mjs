// A person's app pages, English and Chinese: on /app the names follow a language switch in place,
// and the details in Chinese say each thing once; a renter's page of a running rental shows no
// address on the box's network, "End rental" says what happens to the hold and the data, then the
// page says when it ended (at 1440 and 390 px); the market's page of the app names "no GPU" one
// way. Real binary, real Chromium, a box that speaks the agent protocol from here.
import { test, expect, expectHydrated, verifiedAccount, apiSession, signIn, fakeBox, ok, stamp, SIZES } from './fixtures.mjs';

const T = {
  en: {
    endRental: 'End rental', endText: 'the rest of the hold returns to your wallet', dataText: 'The app and its data on the box are deleted.',
    endsAt: 'Ends at', endedAt: 'Ended at', boxAddress: "Address on the box's network", open: 'Open', uninstall: 'Uninstall', noGpu: 'No GPU',
  },
  zh: {
    endRental: '结束租用', endText: '冻结的其余金额退回您的钱包', dataText: '设备上的应用及其数据将被删除。',
    endsAt: '结束时间', endedAt: '已结束于', boxAddress: '设备所在网络的地址', open: '打开', uninstall: '卸载', noGpu: '无 GPU',
  },
};

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
  await page.screenshot({ path: 'test-results/app-details-app-names-zh.png', fullPage: true });

  // The details in Chinese: "类型" once (the type), the kind under its own label, the type translated.
  await page.goto(`/app/details?id=${inst.id}`);
  const facts = page.locator('#app-facts').locator('..');
  await expect(facts.locator('dt', { hasText: '使用方式' })).toHaveCount(1);
  await expect(facts.locator('dt').filter({ hasText: /^类型$/ })).toHaveCount(1);
  await expect(facts.locator('dt').filter({ hasText: /^类型$/ }).locator('+ dd')).toHaveText('服务器');
  await page.screenshot({ path: 'test-results/app-details-app-details-zh.png', fullPage: true });
  await page.getByRole('group', { name: '语言' }).getByRole('button', { name: /EN/ }).click();
  await expect(facts.locator('dt').filter({ hasText: /^Type$/ }).locator('+ dd')).toHaveText('Server');
  await expect(page.locator('main h1')).toContainText('Terraria Server');
  expect(consoleErrors).toEqual([]);
});

for (const lang of ['en', 'zh']) {
  const t = T[lang];

  test(`a renter's app page: no box address, End rental says what happens, then when it ended (${lang})`, async ({ page, request, consoleErrors }) => {
    const s = stamp();
    const owner = `rent3-owner-${lang}-${s}@example.com`;
    const renter = `rent3-renter-${lang}-${s}@example.com`;
    await verifiedAccount(request, owner);
    await verifiedAccount(request, renter);
    const ownerAuth = await apiSession(request, owner);
    const renterAuth = await apiSession(request, renter);
    const box = await fakeBox(request, ownerAuth, `Rent box ${s}`);
    await ok(await request.put(`/api/ebs/v2/devices/${box.id}/sharing`, { headers: ownerAuth, data: { mode: 'manual', rentable: true, price_per_hour: 100 } }));
    const inst = await ok(await request.post('/api/rmp/v1/apps/rent', { headers: renterAuth, data: { app_id: 'grafana', device_id: box.id, hours: 2 } }));
    const cmd = (await box.beat()).find((c) => c.payload.installation_id === inst.id);
    await box.beat({ installations: [{ id: inst.id, status: 'running', url: 'http://10.9.8.7:32768/' }], acks: [{ id: cmd.id, ok: true }] });

    for (const size of SIZES) {
      await page.setViewportSize(size);
      await signIn(page, renter, { lang, redirect: `/app/details?id=${inst.id}`, fresh: true });
      await page.goto(`/app/details?id=${inst.id}&language=${lang}`);
      await expectHydrated(page);
      const head = page.locator('.app-details-head');
      await expect(head.getByRole('button', { name: t.endRental })).toBeVisible();
      await expect(head.getByRole('button', { name: t.open, exact: true })).toBeVisible();
      await expect(head.getByRole('button', { name: t.uninstall })).toHaveCount(0);
      await expect(page.getByText(t.endsAt, { exact: true })).toBeVisible();
      expect(await page.content()).not.toContain('10.9.8.7');
      await expect(page.getByText(t.boxAddress)).toHaveCount(0);
      await page.screenshot({ path: `test-results/app-details-rental-${lang}-${size.width}.png`, fullPage: true });
    }
    // The renter's API answers never carry it either.
    expect(JSON.stringify(await ok(await request.get(`/api/rmp/v1/apps/${inst.id}`, { headers: renterAuth })))).not.toContain('10.9.8.7');

    await page.locator('.app-details-head').getByRole('button', { name: t.endRental }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(t.endText);
    await expect(dialog).toContainText(t.dataText);
    await page.screenshot({ path: `test-results/app-details-end-rental-${lang}.png` });
    await dialog.getByRole('button', { name: t.endRental }).click();
    await expect(dialog).toHaveCount(0);
    // The box removes it.
    const removal = (await box.beat()).find((c) => c.payload.installation_id === inst.id);
    await box.beat({ acks: [{ id: removal.id, ok: true }] });
    await expect.poll(async () => (await ok(await request.get(`/api/rmp/v1/apps/${inst.id}`, { headers: renterAuth }))).status).toBe('not_install');
    await page.reload();
    await expectHydrated(page);
    await expect(page.getByText(t.endedAt, { exact: true })).toBeVisible();
    await expect(page.getByText(t.endsAt, { exact: true })).toHaveCount(0);
    await page.screenshot({ path: `test-results/app-details-rental-ended-${lang}.png`, fullPage: true });

    // The market's page of the app names "no GPU" one way, in its facts and its offers.
    await page.goto(`/market/details?id=grafana&language=${lang}`);
    await expectHydrated(page);
    if (lang === 'zh') expect(await page.locator('main').textContent()).not.toContain('显卡');
    await expect(page.getByText(t.noGpu, { exact: false }).first()).toBeVisible();
    expect(consoleErrors).toEqual([]);
  });
}
