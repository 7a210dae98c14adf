// Signing in from a link: /pc-web drops the tokens from the address bar and the history at once,
// asks before replacing another signed-in account and asks a signed-out visitor too (showing the
// token's account, never the link's `email`), and stores nothing for a token the server does not
// know; sign-in never follows a redirect with a backslash or a control character, and keeps what
// was typed before the page's scripts ran.
import { test, expect, verifiedAccount, PASSWORD, submitSignIn, HYDRATE_MS } from './fixtures.mjs';

async function session(request, email) {
  await verifiedAccount(request, email);
  const res = await request.post('/api/iam/v2/login/password', { data: { email, password: PASSWORD } });
  return (await res.json()).data;
}

function entry(s, email, extra = {}) {
  return `/pc-web?${new URLSearchParams({
    redirect: '/account', token: s.token, email, isPCMode: 'true', smeId: 'user', userType: 'user',
    refresh_token: s.refresh_token, access_token_expire: String(s.access_token_expire), ...extra,
  })}`;
}

test('pc-web leaves no token in the address bar or the history', async ({ page, request }) => {
  const email = `pc-clean-${Date.now()}@example.com`;
  const s = await session(request, email);
  await page.goto('/market?language=en');
  await page.goto(entry(s, email));
  await page.getByRole('dialog').getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/account/);
  expect(page.url()).not.toContain('token');
  expect(await page.evaluate(() => localStorage.getItem('token'))).toBe(s.token);
  // Back goes to the page before the entry: the entry URL is gone from the history.
  await page.goBack();
  await expect(page).toHaveURL(/\/market/);
  expect(page.url()).not.toContain('token');
  // Forward again does not bring the entry back either.
  await page.goForward();
  expect(page.url()).not.toContain('token');
});

for (const lang of ['en', 'zh']) {
  test(`pc-web asks before replacing another signed-in account (${lang})`, async ({ page, request }) => {
    const stamp = `${Date.now()}-${lang}`;
    const first = `pc-first-${stamp}@example.com`;
    const second = `pc-second-${stamp}@example.com`;
    const a = await session(request, first);
    const b = await session(request, second);
    await page.goto(entry(a, first, { language: lang }));
    await page.getByRole('dialog').getByRole('button', { name: lang === 'zh' ? '登录' : 'Sign in' }).click();
    await expect(page).toHaveURL(/\/account/);
    // Another link, another account: a question, not a silent switch, even when the link claims
    // the signed-in person's own address.
    await page.goto(entry(b, first, { language: lang }));
    const dialog = page.getByRole('dialog');
    const title = lang === 'zh' ? '已有其他账号登录' : 'Another account is signed in';
    await expect(dialog).toContainText(title);
    await expect(dialog).toContainText(first);
    await expect(dialog).toContainText(second);
    expect(page.url()).not.toContain('token');
    await page.screenshot({ path: `test-results/pc-web-switch-${lang}.png` });
    // Keeping the current account leaves it signed in.
    await dialog.getByRole('button', { name: lang === 'zh' ? '取消' : 'Cancel' }).click();
    await expect(page).toHaveURL(/\/account/);
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBe(a.token);
    // Asked again, replacing it signs the other account in.
    await page.goto(entry(b, second, { language: lang }));
    await page.getByRole('dialog').getByRole('button', { name: lang === 'zh' ? '替换' : 'Replace' }).click();
    await expect(page).toHaveURL(/\/account/);
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBe(b.token);
  });
}

for (const lang of ['en', 'zh']) {
  test(`pc-web asks a signed-out visitor before signing them in from a link (${lang})`, async ({ page, request }) => {
    const stamp = `${Date.now()}-${lang}`;
    const attacker = `pc-attacker-${stamp}@example.com`;
    const s = await session(request, attacker);
    // The link claims another address: the question names the token's account.
    await page.goto(entry(s, `victim-${stamp}@example.com`, { language: lang }));
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(lang === 'zh' ? '通过链接登录？' : 'Sign in from a link?');
    await expect(dialog).toContainText(attacker);
    await expect(dialog).not.toContainText('victim-');
    expect(page.url()).not.toContain('token');
    await page.screenshot({ path: `test-results/pc-web-sign-in-${lang}.png` });
    // Declined: nothing is stored, and the console asks for a sign-in.
    await dialog.getByRole('button', { name: lang === 'zh' ? '取消' : 'Cancel' }).click();
    await expect(page).toHaveURL(/\/auth\/signin/);
    expect(await page.evaluate(() => localStorage.getItem('token'))).toBeNull();
  });
}

test('pc-web stores nothing for a token the server does not know', async ({ page }) => {
  await page.goto(entry({ token: 'not-a-token', refresh_token: 'nor-this', access_token_expire: 0 }, 'someone@example.com'));
  await expect(page).toHaveURL(/\/auth\/signin/);
  await expect(page.getByRole('dialog')).toHaveCount(0);
  expect(await page.evaluate(() => localStorage.getItem('token'))).toBeNull();
});

test('sign-in does not follow a redirect with a backslash or a control character', async ({ page, request, baseURL }) => {
  const email = `redirect-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  for (const target of ['/\\evil.example', '/%09/evil.example']) {
    await page.goto(`/auth/signin?language=en&redirect=${target}`);
    await submitSignIn(page, email);
    // The fallback (the console), on this site: never stuck on sign-in, never elsewhere.
    await expect(page).not.toHaveURL(/\/auth\/signin/);
    expect(new URL(page.url()).origin).toBe(new URL(baseURL).origin);
    expect(page.url()).not.toContain('evil');
    await page.evaluate(() => localStorage.clear());
  }
});

test('what is typed into sign-in before the page’s scripts run is kept and signs in', async ({ page, request, consoleErrors }) => {
  const email = `early-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  // The scripts arrive late (a slow line): the person types into the server's markup meanwhile.
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route('**/static/*.js', async (route) => {
    await held;
    await route.continue();
  });
  // Not waiting for the load event (it waits for the scripts): the markup is there to type into.
  await page.goto('/auth/signin?language=en', { waitUntil: 'commit' });
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  expect(await page.evaluate(() => window.__zmHydrated === true)).toBe(false);
  release();
  await page.waitForFunction(() => window.__zmHydrated === true, null, { timeout: HYDRATE_MS });
  // Still there once React has attached, and what the form sends.
  await expect(page.getByLabel('Email', { exact: true })).toHaveValue(email);
  await page.getByRole('button', { name: 'Sign In', exact: true }).click();
  await expect(page).not.toHaveURL(/\/auth\/signin/);
  expect(consoleErrors).toEqual([]);
});
