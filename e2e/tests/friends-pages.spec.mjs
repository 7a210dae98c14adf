// The Friends and Messages pages, English and Chinese: with no conversation yet, Messages offers
// the friends themselves; Message on the friends list opens the conversation at the top of the
// page; Enter in "New tag" adds the tag and keeps the dialog open; the headings stay clear of the
// sticky header on load (at 1440 and 390 px). Real binary, real Chromium.
import { test, expect, expectHydrated, verifiedAccount, apiSession, signIn, ok, stamp, SIZES } from './fixtures.mjs';

const T = {
  en: { message: 'Message', pickFriend: 'Pick a friend to message', edit: 'Edit', newTag: 'New tag', save: 'Save' },
  zh: { message: '发消息', pickFriend: '选择一位好友发消息', edit: '编辑', newTag: '新标签', save: '保存' },
};

/** The page heading is not under the sticky header. */
const headingClear = (page) =>
  page.evaluate(() => {
    const h1 = document.querySelector('main h1')?.getBoundingClientRect();
    const header = document.querySelector('.console-header')?.getBoundingClientRect();
    return Boolean(h1 && header && h1.top >= header.bottom - 1 && h1.height > 0);
  });

for (const lang of ['en', 'zh']) {
  test(`messaging a friend opens the conversation; Enter adds a tag (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const s = stamp();
    const a = `msg-a-${lang}-${s}@example.com`;
    const b = `msg-b-${lang}-${s}@example.com`;
    await verifiedAccount(request, a);
    await verifiedAccount(request, b);
    const req = await ok(await request.post('/api/cim/v1/friends/requests', { headers: await apiSession(request, a), data: { email: b } }));
    await ok(await request.post(`/api/cim/v1/friends/requests/${req.id}/accept`, { headers: await apiSession(request, b) }));

    await signIn(page, a, { lang });
    // No conversation yet: Messages offers the friends themselves, not a link back to /friends.
    await page.goto('/messages');
    await expect(page.getByRole('heading', { name: t.pickFriend })).toBeVisible();
    // People are shown by their name: the address's local part for these accounts.
    const nameB = b.split('@')[0];
    const offered = page.locator('.conversations a.conversation', { hasText: nameB });
    await expect(offered).toHaveCount(1);
    await page.screenshot({ path: `test-results/friends-pages-messages-empty-${lang}.png`, fullPage: true });
    await offered.click();
    await expect(page).toHaveURL(/\/messages\?with=/);
    await expect(page.locator('.thread-header h2')).toHaveText(nameB);
    const composer = page.locator('form.composer');
    await composer.getByRole('textbox').fill(`hello ${lang}`);
    await composer.getByRole('textbox').press('Enter');
    await expect(page.locator('.bubble.mine', { hasText: `hello ${lang}` })).toBeVisible();
    // The page heading stays clear of the sticky header.
    const clear = () =>
      page.evaluate(() => {
        const h1 = document.querySelector('main h1')?.getBoundingClientRect();
        const header = document.querySelector('.console-header')?.getBoundingClientRect();
        return Boolean(h1 && header && h1.top >= header.bottom - 1);
      });
    await expect.poll(clear).toBe(true);

    // From the friends list, Message opens the same conversation, at the top of the page even
    // when the list was scrolled (a short window makes it scroll).
    await page.setViewportSize({ width: 1440, height: 420 });
    await page.goto('/friends');
    const row = page.locator('tr', { hasText: b });
    await expect(row).toBeVisible();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    await row.getByRole('link', { name: t.message, exact: true }).click();
    await expect(page).toHaveURL(/\/messages\?with=/);
    await expect(page.locator('.thread-header h2')).toHaveText(nameB);
    await expect(page.locator('.bubble.mine', { hasText: `hello ${lang}` })).toBeVisible();
    await expect.poll(clear).toBe(true);
    await page.setViewportSize({ width: 1440, height: 900 });

    // Enter in "New tag" adds the tag, checked, and keeps the dialog open; Save saves.
    await page.goto('/friends');
    await page.locator('tr', { hasText: b }).getByRole('button', { name: new RegExp(`^${t.edit} `) }).click();
    const dialog = page.getByRole('dialog');
    const tag = `team-${lang}`;
    await dialog.getByLabel(t.newTag, { exact: true }).fill(tag);
    await dialog.getByLabel(t.newTag, { exact: true }).press('Enter');
    await expect(dialog).toBeVisible();
    await expect(dialog.getByLabel(tag, { exact: true })).toBeChecked();
    await expect(dialog.getByLabel(t.newTag, { exact: true })).toHaveValue('');
    await page.screenshot({ path: `test-results/friends-pages-new-tag-${lang}.png` });
    await dialog.getByRole('button', { name: t.save, exact: true }).click();
    await expect(dialog).toHaveCount(0);
    await expect(page.locator('tr', { hasText: b }).locator('.chip')).toHaveText(tag);
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
        await page.screenshot({ path: `test-results/friends-pages${path.replace('/', '-')}-${lang}-${size.width}.png` });
      }
      expect(consoleErrors).toEqual([]);
    });
  }
}
