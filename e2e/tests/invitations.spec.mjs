// Company invitations in the console, English and Chinese: invited, a person's bell links to where
// the invitation is answered, and a company joined in another browser shows at once (the sign-in
// toast clear of the header's switcher and bell); an invitation link asks before joining: Decline,
// Accept (at 1440 and 390 px). Real binary, real Chromium.
import { test, expect, expectHydrated, mailedLink, mailMatch, verifiedAccount, apiSession, signIn, ok, stamp, SIZES } from './fixtures.mjs';

const T = {
  en: {
    switchCompany: 'Switch company', notifications: 'Notifications', companies: 'Companies', signedIn: 'Signed in',
    joinCompany: 'Join Company', accept: 'Accept and join', decline: 'Decline', joined: 'You joined the company.', declined: 'This invitation was declined.',
    invitedBy: (who, company) => `${who} invited you to join ${company} as Member.`,
  },
  zh: {
    switchCompany: '切换企业', notifications: '通知', companies: '企业', signedIn: '登录成功',
    joinCompany: '加入企业', accept: '接受并加入', decline: '拒绝', joined: '您已加入企业。', declined: '该邀请已被拒绝。',
    invitedBy: (who, company) => `${who} 邀请您以成员身份加入「${company}」。`,
  },
};

const JOIN_LINK = /\/iam\/v1\/sme\/join\?code=([A-Za-z0-9_-]+)/;

/** True when the two boxes share any area. */
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

for (const lang of ['en', 'zh']) {
  const t = T[lang];

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
    await page.screenshot({ path: `test-results/invitations-toast-${lang}.png` });

    // Invited: the bell's notification links to where the invitation is answered.
    await ok(await request.post('/api/iam/v1/sme/invite', { headers: adminH, data: { email: me, role: 'member' } }));
    await page.reload();
    await expect(bell.locator('.badge')).toHaveText('1');
    await bell.click();
    const link = page.locator('.notifications-popover').getByRole('link', { name: new RegExp(company) });
    await expect(link).toHaveAttribute('href', '/company-email');
    await page.screenshot({ path: `test-results/invitations-bell-${lang}.png` });
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
    await page.screenshot({ path: `test-results/invitations-joined-${lang}.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
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
          await page.screenshot({ path: `test-results/invitations-invitation-${lang}-${size.width}.png`, fullPage: true });
          await page.getByRole('button', { name: t.decline, exact: true }).click();
          await expect(page.getByRole('heading', { name: t.declined })).toBeVisible();
        } else {
          await page.getByRole('button', { name: t.accept }).click();
          await expect(page.getByRole('heading', { name: t.joined })).toBeVisible();
          await page.screenshot({ path: `test-results/invitations-joined-${lang}-${size.width}.png`, fullPage: true });
        }
      }
      const mine = await ok(await request.get('/api/iam/v1/sme/member/records?scope=mine', { headers: await apiSession(request, me) }));
      expect(mine.items.map((r) => `${r.sme_name}:${r.status}`).sort()).toEqual([`Accept Co ${s.slice(-5)}:accepted`, `Decline Co ${s.slice(-5)}:declined`]);
      expect(consoleErrors).toEqual([]);
    });
  }
}
