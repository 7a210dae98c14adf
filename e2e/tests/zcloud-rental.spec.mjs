// The host owner's view of Z-CLOUD machines others run on their server group (issue 29, finding
// 2): listed on the device details page with End; ending gives notice (the row shows when it
// stops). In English and Chinese, with screenshots.
import { test, expect, verifiedAccount, apiSession, expectHydrated, signIn } from './fixtures.mjs';

const GIB = 2 ** 30;

async function ok(res) {
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()).data;
}

for (const lang of ['en', 'zh']) {
  test(`the host owner sees and ends a stranger's machine (${lang})`, async ({ page, request, consoleErrors }) => {
    const stamp = `${Date.now()}-${lang}`;
    const owner = `host-${stamp}@example.com`;
    const renter = `renter-${stamp}@example.com`;
    await verifiedAccount(request, owner);
    await verifiedAccount(request, renter);
    const ownerH = await apiSession(request, owner);
    const renterH = await apiSession(request, renter);

    // Each run's own host: the zh one is the only host big enough for its machine.
    const spec = { cpu_cores: lang === 'zh' ? 32 : 16, memory_bytes: 64 * GIB, disk_bytes: 1024 * GIB, gpus: [] };
    const reg = await ok(await request.post('/api/agent/v1/register', { data: { type: 'server group', name: 'rack', spec } }));
    const beat = (data) => request.post('/api/agent/v1/heartbeat', { headers: { authorization: `Bearer ${reg.device_secret}` }, data });
    await ok(await beat({ spec, acks: [] }));
    await ok(await request.post('/api/ebs/v2/devices/link', { headers: ownerH, data: { device_id: reg.device_id, pairing_code: reg.pairing_code } }));
    await ok(await request.put(`/api/ebs/v2/devices/${reg.device_id}/sharing`, { headers: ownerH, data: { mode: 'manual', rentable: true, price_per_hour: 160 } }));
    // A share of the host's 1.60 coins an hour, held for one hour.
    const vm = await ok(await request.post('/api/ebs/v2/zcloud', { headers: renterH, data: { name: 'renter vm', cpu_cores: lang === 'zh' ? 20 : 1, memory_bytes: GIB, disk_bytes: 10 * GIB, hours: 1 } }));
    expect(vm.host_id).toBe(reg.device_id);

    await signIn(page, owner, { redirect: `/devices/details?id=${reg.device_id}`, fresh: true });
    await page.goto(`/devices/details?id=${reg.device_id}&language=${lang}`);
    await expectHydrated(page);
    await expect(page.locator('html')).toHaveAttribute('lang', lang);
    const row = page.getByTestId('host-rental');
    await expect(row).toHaveCount(1);
    await expect(row).toContainText('renter vm');
    await page.screenshot({ path: `test-results/zcloud-rental-${lang}.png`, fullPage: true });
    await row.getByRole('button', { name: lang === 'zh' ? '结束' : 'End' }).click();
    await page.getByRole('dialog').getByRole('button').last().click();
    await expect(row).toContainText(lang === 'zh' ? '停止' : 'Stops at');
    await page.screenshot({ path: `test-results/zcloud-rental-${lang}-ending.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
}
