// Two-factor sign-in (issue 43, item 12), in English and in Chinese: turn it on on /account (the
// QR code and the key the server made; the code is computed here from the key, RFC 6238 with
// node:crypto), see the recovery codes once, sign out, sign in again: the password is followed by
// the code, a wrong code shows the localized error, the right one signs in.
import { createHmac } from 'node:crypto';
import { test, expect, expectHydrated, verifiedAccount, signIn, submitSignIn } from './fixtures.mjs';

const T = {
  en: {
    section: 'Two-factor sign-in', start: 'Turn on', code: 'Code from your authenticator app', confirm: 'Confirm',
    codesTitle: 'Your recovery codes', done: 'I have saved them', on: 'On', userMenu: 'User menu', signOut: 'Sign Out',
    submit: 'Sign In', wrong: 'That code is not right, or it was already used',
  },
  zh: {
    section: '两步验证', start: '开启', code: '身份验证器应用中的验证码', confirm: '确认',
    codesTitle: '您的恢复码', done: '我已保存', on: '已开启', userMenu: '用户菜单', signOut: '退出登录',
    submit: '登录', wrong: '验证码不正确或已被使用',
  },
};

/** RFC 4648 base32 to bytes. */
function fromBase32(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out = [];
  for (const c of text.replace(/=+$/, '').toUpperCase()) {
    value = ((value << 5) | alphabet.indexOf(c)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238 (SHA-1, 6 digits) for the 30-second step `step`. */
function totp(secret, step) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const h = createHmac('sha1', fromBase32(secret)).update(counter).digest();
  const o = h[19] & 15;
  const n = ((h[o] & 0x7f) << 24) | (h[o + 1] << 16) | (h[o + 2] << 8) | h[o + 3];
  return String(n % 1_000_000).padStart(6, '0');
}

const stepNow = () => Math.floor(Date.now() / 30_000);

test('the RFC 6238 test vector', () => {
  // RFC 6238 appendix B, SHA-1, the key "12345678901234567890" (base32 below), T = 59 s: 94287082
  // in 8 digits, so 287082 in 6.
  expect(totp('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 1)).toBe('287082');
});

for (const lang of ['en', 'zh']) {
  test(`turn on two-factor sign-in, then sign in with a code (${lang})`, async ({ page, request, consoleErrors }) => {
    const t = T[lang];
    const email = `totp-${lang}-${Date.now()}@example.com`;
    await verifiedAccount(request, email);
    await signIn(page, email, { lang });

    await page.goto(`/account?language=${lang}`);
    await expectHydrated(page);
    const section = page.locator('section', { has: page.getByRole('heading', { name: t.section, level: 2 }) });
    await section.getByRole('button', { name: t.start, exact: true }).click();
    const secretText = section.locator('.two-factor-secret');
    await expect(secretText).toHaveText(/^[A-Z2-7]{32}$/);
    await expect(section.locator('img.two-factor-qr')).toBeVisible();
    await page.screenshot({ path: `test-results/two-factor-setup-${lang}.png`, fullPage: true });
    const secret = (await secretText.textContent()) ?? '';

    const enrolStep = stepNow();
    await section.getByLabel(t.code, { exact: true }).fill(totp(secret, enrolStep));
    await section.getByRole('button', { name: t.confirm, exact: true }).click();
    await expect(section.getByRole('heading', { name: t.codesTitle })).toBeVisible();
    await expect(section.locator('.two-factor-codes li')).toHaveCount(10);
    await expect(section.locator('.two-factor-codes li').first()).toHaveText(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    await page.screenshot({ path: `test-results/two-factor-codes-${lang}.png`, fullPage: true });
    await section.getByRole('button', { name: t.done }).click();
    await expect(section.locator('.two-factor-state')).toContainText(t.on);

    // Sign out, then in: the password is followed by the code.
    await page.getByRole('button', { name: t.userMenu }).click();
    await page.getByRole('button', { name: t.signOut }).click();
    await expect(page).toHaveURL(/\/auth\/signin/);
    await submitSignIn(page, email, { lang });
    const codeField = page.getByLabel(t.code, { exact: true });
    await expect(codeField).toBeVisible();
    await codeField.fill(totp(secret, stepNow() + 40));
    await page.getByRole('button', { name: t.submit, exact: true }).click();
    await expect(page.getByText(t.wrong)).toBeVisible();
    await expect(page).toHaveURL(/\/auth\/signin/);
    await page.screenshot({ path: `test-results/two-factor-wrong-${lang}.png`, fullPage: true });
    // A step after the one used to turn it on (a code is good once).
    await codeField.fill(totp(secret, Math.max(stepNow(), enrolStep + 1)));
    await page.getByRole('button', { name: t.submit, exact: true }).click();
    await expect(page).not.toHaveURL(/\/auth\/signin/);
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBeTruthy();

    expect(consoleErrors.filter((e) => !e.includes('Failed to load resource'))).toEqual([]);
  });
}
