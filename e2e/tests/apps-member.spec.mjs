// Apps in a company, as a member sees them (no Docker needed: the company's box is registered
// through the real agent protocol and never runs anything, so its installs stay "Preparing").
// The admin installs two apps on a company box and assigns one to the member; the member's /app
// lists only that one, and the market's Install and Rent answer with the permission message.
// In English and in Chinese.
import { test, expect, mailMatch, mailedLink, verifiedAccount, apiSession, signIn } from './fixtures.mjs';

const T = {
  en: {
    switchCompany: 'Switch company', install: 'Install', rent: 'Rent', preparing: 'Preparing',
    denied: 'No permission to install or rent Z-APP, please contact the administrator',
  },
  zh: {
    switchCompany: '切换企业', install: '安装', rent: '租用', preparing: '准备中',
    denied: '无权安装或租用 Z-APP，请联系管理员',
  },
};

const JOIN_LINK = /https?:\/\/\S+\/iam\/v1\/sme\/join\?code=(\S+)/;

async function ok(res) {
  const body = await res.json();
  expect(res.status(), JSON.stringify(body)).toBe(200);
  return body.data;
}

/** The company, its box with Grafana and Vaultwarden installed, Grafana assigned to the member. */
async function seed(request, lang) {
  const stamp = `${lang}-${Date.now()}`;
  const admin = `admin-${stamp}@example.com`;
  const member = `member-${stamp}@example.com`;
  await verifiedAccount(request, admin);
  await verifiedAccount(request, member);
  const adminPersonal = await apiSession(request, admin);
  const company = await ok(await request.post('/api/iam/v1/sme', { headers: adminPersonal, data: { name: `Apps Co ${stamp}` } }));
  const switched = await ok(await request.post('/api/iam/v1/switch', { headers: adminPersonal, data: { smeId: company.id } }));
  const adminH = { authorization: `Bearer ${switched.token}` };
  await ok(await request.post('/api/iam/v1/sme/invite', { headers: adminH, data: { email: member, role: 'member' } }));
  await mailedLink(member, JOIN_LINK);
  const code = mailMatch(member, JOIN_LINK)[1];
  const memberH = await apiSession(request, member);
  await ok(await request.post('/api/iam/v1/sme/join', { headers: memberH, data: { code, accept: true } }));
  const me = await ok(await request.get('/api/iam/v1/account/profile', { headers: memberH }));

  const reg = await ok(
    await request.post('/api/agent/v1/register', {
      data: { type: 'Z-BOX', name: `Company box ${lang}`, spec: { cpu_cores: 8, memory_bytes: 34359738368, disk_bytes: 1099511627776, gpus: [] } },
    }),
  );
  await ok(await request.post('/api/ebs/v2/devices/link', { headers: adminH, data: { device_id: reg.device_id, pairing_code: reg.pairing_code } }));
  for (const app_id of ['grafana', 'vaultwarden']) {
    await ok(await request.post('/api/rmp/v1/apps/install', { headers: adminH, data: { app_id, device_id: reg.device_id } }));
  }
  await ok(
    await request.post('/api/ebs/v1/sme/resources/assign', {
      headers: adminH,
      data: { user_id: me.id, resource_type: 'app', resource_id: 'grafana' },
    }),
  );
  return { member, companyId: company.id };
}

for (const lang of ['en', 'zh']) {
  test(`a member sees only the assigned app and may not install or rent (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const { member, companyId } = await seed(request, lang);

    await signIn(page, member, { lang });
    // Into the company, as a member.
    const switcher = page.getByRole('combobox', { name: t.switchCompany });
    await switcher.selectOption(companyId);
    await expect(switcher).toHaveValue(companyId);
    await page.goto(`/app?language=${lang}`);

    const rows = page.locator('.app-row');
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText('Grafana');
    await expect(rows.first().locator('.app-status')).toHaveText(t.preparing);
    await expect(page.getByText('Vaultwarden')).toHaveCount(0);
    // Their menu is /app only: no link to pages it does not grant.
    await expect(rows.first().getByRole('link', { name: 'Grafana' })).toHaveCount(0);
    await page.screenshot({ path: `test-results/apps-member-list-${lang}.png`, fullPage: true });

    // The market's Install and Rent: the permission message.
    await page.goto(`/market/details?id=grafana&language=${lang}`);
    await page.getByRole('button', { name: t.install, exact: true }).click();
    await expect(page.getByRole('dialog')).toContainText(t.denied);
    await page.screenshot({ path: `test-results/apps-member-denied-${lang}.png` });
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: t.rent, exact: true }).click();
    await expect(page.getByRole('dialog')).toContainText(t.denied);
    expect(consoleErrors).toEqual([]);
  });
}
