// What a newcomer hits, round three (issue 44), as pages: the operator's app form that an upload
// elsewhere made stale reloads saying why; an invitation link asks before joining (Accept,
// Decline); a renter's app page shows no address on the box's network, says "End rental" with
// what happens to the hold and the data, and shows when it ended; one word for "no GPU" in
// Chinese; the /friends and /messages headings clear of the sticky header. English and Chinese,
// at 1440 and 390 px; real binary, real Chromium, a box that speaks the agent protocol from here.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test, expect, expectHydrated, mailMatch, verifiedAccount, apiSession, signIn, fakeBox } from './fixtures.mjs';

const BIN = process.env.E2E_ZMARKET_BIN || resolve(import.meta.dirname, '../../target/release/zmarket');

const T = {
  en: {
    granted: 'Granted 200.00 coins', backUpNow: 'Back up now', byHand: 'by hand', edit: 'Edit', save: 'Save', summary: 'Summary (English)', version: 'Version', image: 'Image', saved: 'is saved',
    stale: 'This app changed since you opened the form (an upload or another edit): it has been reloaded, check it and save again',
    joinCompany: 'Join Company', accept: 'Accept and join', decline: 'Decline', joined: 'You joined the company.', declined: 'This invitation was declined.',
    invitedBy: (who, company) => `${who} invited you to join ${company} as Member.`,
    endRental: 'End rental', endText: 'the rest of the hold returns to your wallet', dataText: 'The app and its data on the box are deleted.',
    endsAt: 'Ends at', endedAt: 'Ended at', boxAddress: "Address on the box's network", open: 'Open', uninstall: 'Uninstall', noGpu: 'No GPU',
  },
  zh: {
    granted: '发放 200.00 币', backUpNow: '立即备份', byHand: '手动', edit: '编辑', save: '保存', summary: '简介（英文）', version: '版本', image: '镜像', saved: '已保存',
    stale: '打开表单后此应用已有改动（上传或其他编辑）：已重新载入，请检查后再保存',
    joinCompany: '加入企业', accept: '接受并加入', decline: '拒绝', joined: '您已加入企业。', declined: '该邀请已被拒绝。',
    invitedBy: (who, company) => `${who} 邀请您以成员身份加入「${company}」。`,
    endRental: '结束租用', endText: '冻结的其余金额退回您的钱包', dataText: '设备上的应用及其数据将被删除。',
    endsAt: '结束时间', endedAt: '已结束于', boxAddress: '设备所在网络的地址', open: '打开', uninstall: '卸载', noGpu: '无 GPU',
  },
};
const SIZES = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

const stamp = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

async function ok(res) {
  const text = await res.text();
  expect(res.status(), text).toBe(200);
  return JSON.parse(text).data;
}

function operatorGrant(email) {
  execFileSync(BIN, ['operator', 'grant', '--data-dir', process.env.E2E_DATA_DIR, '--email', email], { env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' } });
}

/** A minimal `docker save` archive naming `tags` (a manifest.json and a layer). */
function dockerSave(tags) {
  const blocks = [];
  const entry = (name, data) => {
    const h = Buffer.alloc(512);
    h.write(name, 0);
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write('0', 156);
    h.write('ustar\0', 257);
    h.write('00', 263);
    h.write('        ', 148);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  };
  entry('layer.tar', Buffer.alloc(3000, 7));
  entry('manifest.json', Buffer.from(JSON.stringify([{ Config: 'config.json', RepoTags: tags, Layers: ['layer.tar'] }])));
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** The page heading is not under the sticky header. */
const headingClear = (page) =>
  page.evaluate(() => {
    const h1 = document.querySelector('main h1')?.getBoundingClientRect();
    const header = document.querySelector('.console-header')?.getBoundingClientRect();
    return Boolean(h1 && header && h1.top >= header.bottom - 1 && h1.height > 0);
  });

for (const lang of ['en', 'zh']) {
  const t = T[lang];

  test(`an app form made stale by an upload reloads saying why (${lang})`, async ({ page, request, consoleErrors }) => {
    const s = stamp();
    const op = `op3-${lang}-${s}@example.com`;
    await verifiedAccount(request, op);
    operatorGrant(op);
    const auth = await apiSession(request, op);
    const id = `wiki3-${lang}-${s}`;
    await ok(await request.post('/api/ops/v1/apps', {
      headers: auth,
      data: {
        id, name_en: `Wiki ${s}`, name_zh: `维基 ${s}`, summary_en: 'Our wiki', summary_zh: '我们的维基',
        category: 'Work', display_type: 'Server', tier: 'basic', kind: 'own', publisher: 'Acme IT', version: '1.0',
        requirements: { cpu_cores: 1, memory_bytes: 268435456, disk_bytes: 1073741824, gpu_count: 0 },
        image: 'zmarket-test/httpd:1', ports: [{ container: 80, web: true, name: 'web' }],
      },
    }));

    await signIn(page, op, { lang, redirect: '/operator/apps' });
    await page.goto(`/operator/apps?language=${lang}`);
    await expectHydrated(page);
    await page.locator(`tr[data-app="${id}"]`).getByRole('button', { name: t.edit }).click();
    // The form has its own address: a reload opens it again (item 11).
    await expect(page).toHaveURL(new RegExp(`edit=${id}`));
    await page.reload();
    await expectHydrated(page);
    const version = page.getByLabel(t.version, { exact: true });
    await expect(version).toHaveValue('1.0');

    // Another tab uploads an archive of another image: the app moves to it and to 1.0+r1.
    const image = `acme/wiki-${s}:2`;
    const up = await ok(await request.post(`/api/ops/v1/apps/${id}/image`, {
      headers: auth,
      multipart: { file: { name: 'image.tar', mimeType: 'application/x-tar', buffer: dockerSave([image]) } },
    }));
    expect(up.image).toBe(image);

    // This form still shows 1.0: saving it is refused, and it reloads with what the app is now.
    await page.getByLabel(t.summary, { exact: true }).fill('A stale summary');
    await page.getByRole('button', { name: t.save, exact: true }).click();
    await expect(page.getByRole('alert').filter({ hasText: t.stale })).toBeVisible();
    await expect(version).toHaveValue('1.0+r1');
    await expect(page.getByLabel(t.image, { exact: true })).toHaveValue(image);
    await expect(page.getByLabel(t.summary, { exact: true })).toHaveValue('Our wiki');
    await page.screenshot({ path: `test-results/newcomer3-stale-form-${lang}.png`, fullPage: true });
    const after = await ok(await request.get(`/api/ops/v1/apps/${id}`, { headers: auth }));
    expect([after.image, after.version, after.summary_en]).toEqual([image, '1.0+r1', 'Our wiki']);

    // Saved again from the reloaded form: it applies, and keeps the uploaded image.
    await page.getByLabel(t.summary, { exact: true }).fill('A fresh summary');
    await page.getByRole('button', { name: t.save, exact: true }).click();
    await expect(page.getByText(lang === 'zh' ? `维基 ${s} ${t.saved}` : `Wiki ${s} ${t.saved}`)).toBeVisible();
    const saved = await ok(await request.get(`/api/ops/v1/apps/${id}`, { headers: auth }));
    expect([saved.image, saved.version, saved.summary_en]).toEqual([image, '1.0+r1', 'A fresh summary']);

    // The audit says what was done in sentences, amounts in coins (200 coins, not 20000 cents).
    const self = (await ok(await request.get(`/api/ops/v1/users?q=${encodeURIComponent(op)}`, { headers: auth }))).items[0];
    await ok(await request.post(`/api/ops/v1/users/${self.id}/grant`, { headers: auth, data: { amount: 20000, memo: 'welcome' } }));
    await page.goto(`/operator/audit?language=${lang}`);
    await expectHydrated(page);
    const grant = page.locator('tr[data-action="user.grant"]').first();
    await expect(grant).toContainText(t.granted);
    await expect(grant).not.toContainText('20000');
    await expect(page.locator('tr[data-action="app.image"]').first()).toContainText(image);
    await expect(page.locator('tr[data-action="app.update"]').first()).toContainText('summary_en: Our wiki → A fresh summary');
    // The action's name stays on one line.
    const lines = await grant.locator('td.audit-action').evaluate((td) => {
      const range = document.createRange();
      range.selectNodeContents(td);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    });
    expect(lines).toBe(1);
    await page.screenshot({ path: `test-results/newcomer3-audit-${lang}.png`, fullPage: true });

    // Back up now, from the overview: the last backup is it, taken by hand.
    await page.goto(`/operator?language=${lang}`);
    await expectHydrated(page);
    await page.getByRole('button', { name: t.backUpNow }).click();
    await expect(page.locator('[data-backup="manual"]')).toContainText(t.byHand);
    await page.screenshot({ path: `test-results/newcomer3-backup-${lang}.png`, fullPage: true });
    expect(consoleErrors.filter((e) => !e.includes('409'))).toEqual([]);
  });

  for (const size of SIZES) {
    test(`an invitation link asks before joining: Decline, Accept (${lang}, ${size.width})`, async ({ page, request, consoleErrors }) => {
      await page.setViewportSize(size);
      const s = stamp();
      const owner = `inv3-owner-${lang}-${s}@example.com`;
      const me = `inv3-me-${lang}-${s}@example.com`;
      await verifiedAccount(request, owner);
      await verifiedAccount(request, me);
      const personal = await apiSession(request, owner);
      await ok(await request.put('/api/iam/v1/account/profile/info', { headers: personal, data: { name: `Olivia ${s.slice(-4)}` } }));
      // Two invitations, each link read from its mail as it arrives.
      const JOIN = /https?:\/\/\S+(\/iam\/v1\/sme\/join\?code=[A-Za-z0-9_-]+)/;
      const links = [];
      for (const name of [`Decline Co ${s.slice(-5)}`, `Accept Co ${s.slice(-5)}`]) {
        const company = await ok(await request.post('/api/iam/v1/sme', { headers: personal, data: { name } }));
        const sw = await ok(await request.post('/api/iam/v1/switch', { headers: personal, data: { smeId: company.id } }));
        await ok(await request.post('/api/iam/v1/sme/invite', { headers: { authorization: `Bearer ${sw.token}` }, data: { email: me } }));
        await expect.poll(() => mailMatch(me, JOIN)?.[1] ?? null).not.toBe(links[links.length - 1]?.path ?? null);
        links.push({ name, path: mailMatch(me, JOIN)[1] });
      }

      await signIn(page, me, { lang });
      const meAuth = await apiSession(request, me);
      for (const link of links) {
        await page.goto(`${link.path}&language=${lang}`);
        await expectHydrated(page);
        await expect(page.getByRole('heading', { name: t.joinCompany })).toBeVisible();
        await expect(page.getByTestId('invitation')).toHaveText(t.invitedBy(`Olivia ${s.slice(-4)}`, link.name));
        // Opening it joined nothing.
        const open = await ok(await request.get('/api/iam/v1/sme/member/records?scope=mine', { headers: meAuth }));
        expect(open.items.find((r) => r.sme_name === link.name)?.status).toBe('invited');
        if (link.name.startsWith('Decline')) {
          await page.screenshot({ path: `test-results/newcomer3-invitation-${lang}-${size.width}.png`, fullPage: true });
          await page.getByRole('button', { name: t.decline, exact: true }).click();
          await expect(page.getByRole('heading', { name: t.declined })).toBeVisible();
        } else {
          await page.getByRole('button', { name: t.accept }).click();
          await expect(page.getByRole('heading', { name: t.joined })).toBeVisible();
          await page.screenshot({ path: `test-results/newcomer3-joined-${lang}-${size.width}.png`, fullPage: true });
        }
      }
      const mine = await ok(await request.get('/api/iam/v1/sme/member/records?scope=mine', { headers: await apiSession(request, me) }));
      expect(mine.items.map((r) => `${r.sme_name}:${r.status}`).sort()).toEqual([`Accept Co ${s.slice(-5)}:accepted`, `Decline Co ${s.slice(-5)}:declined`]);
      expect(consoleErrors).toEqual([]);
    });
  }

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
      await page.screenshot({ path: `test-results/newcomer3-rental-${lang}-${size.width}.png`, fullPage: true });
    }
    // The renter's API answers never carry it either.
    expect(JSON.stringify(await ok(await request.get(`/api/rmp/v1/apps/${inst.id}`, { headers: renterAuth })))).not.toContain('10.9.8.7');

    await page.locator('.app-details-head').getByRole('button', { name: t.endRental }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(t.endText);
    await expect(dialog).toContainText(t.dataText);
    await page.screenshot({ path: `test-results/newcomer3-end-rental-${lang}.png` });
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
    await page.screenshot({ path: `test-results/newcomer3-rental-ended-${lang}.png`, fullPage: true });

    // The market's page of the app names "no GPU" one way, in its facts and its offers.
    await page.goto(`/market/details?id=grafana&language=${lang}`);
    await expectHydrated(page);
    if (lang === 'zh') expect(await page.locator('main').textContent()).not.toContain('显卡');
    await expect(page.getByText(t.noGpu, { exact: false }).first()).toBeVisible();
    expect(consoleErrors).toEqual([]);
  });

  for (const size of SIZES) {
    test(`the /friends and /messages headings are clear of the sticky header on load (${lang}, ${size.width})`, async ({ page, request, consoleErrors }) => {
      await page.setViewportSize(size);
      const s = stamp();
      const me = `social3-${lang}-${s}@example.com`;
      await verifiedAccount(request, me);
      await signIn(page, me, { lang });
      for (const path of ['/friends', '/messages']) {
        await page.goto(`${path}?language=${lang}`);
        await expectHydrated(page);
        await expect(page.locator('main h1')).toBeVisible();
        await expect.poll(() => headingClear(page)).toBe(true);
        expect(await page.evaluate(() => window.scrollY)).toBe(0);
        await page.screenshot({ path: `test-results/newcomer3${path.replace('/', '-')}-${lang}-${size.width}.png` });
      }
      expect(consoleErrors).toEqual([]);
    });
  }
}
