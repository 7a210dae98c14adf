// Shared helpers: a page fixture that fails the test on console errors and hydration errors.
import { test as base, expect } from '@playwright/test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How long a page may take to attach React. CI runs two spec lanes at once on two cores (a Docker
 * build in one, a cold Chromium in the other): a first page has taken over 10 s there.
 */
export const HYDRATE_MS = 30_000;

export const test = base.extend({
  // The page is used once React has attached, as `goto` returns: a click or a choice made on the
  // server's markup before is lost, as it would be for a person (forms keep what is typed). A
  // `waitUntil` other than `load` opts out (a test of what happens before React attaches).
  page: async ({ page }, use) => {
    const goto = page.goto.bind(page);
    page.goto = async (url, options) => {
      const response = await goto(url, options);
      if (!options?.waitUntil || options.waitUntil === 'load') await attached(page);
      return response;
    };
    await use(page);
  },
  consoleErrors: async ({ page }, use) => {
    const errors = [];
    page.on('console', (msg) => {
      // Not the product's: Chromium aborts the loads in flight when a network interface appears
      // on the machine, which Docker does (a veth) each time the test's agent starts a container
      // (seen in apps-time's update, 2026-11-30); the page's next poll loads it again.
      if (msg.type() === 'error' && !msg.text().includes('net::ERR_NETWORK_CHANGED')) errors.push(msg.text());
    });
    page.on('pageerror', (err) => errors.push(String(err)));
    await use(errors);
  },
});

/**
 * Waits until React has attached to the page (or there is no app on it: a PDF, an app's own web
 * interface). A navigation meanwhile (a client redirect) ends the wait; the next page is checked
 * by what the test looks for next.
 */
async function attached(page) {
  await page
    .waitForFunction(() => !document.getElementById('root') || window.__zmHydrated === true, null, { timeout: HYDRATE_MS })
    .catch(() => {});
}

/** True when the page hydrated the server markup (not a client-only fallback render). */
export async function expectHydrated(page) {
  await expect(page.locator('#root')).toHaveAttribute('data-ssr', '1');
  await page.waitForFunction(() => window.__zmHydrated === true, null, { timeout: HYDRATE_MS });
}

export { expect };

export const PASSWORD = 'Secret123';

/**
 * The newest match of `pattern` in a mail to `email` from the server's outbox (`<data>/mail/*.eml`),
 * or null while none has been written yet (the directory appears with the first mail).
 */
export function mailMatch(email, pattern) {
  const dir = join(process.env.E2E_DATA_DIR, 'mail');
  let files = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.eml')).sort();
  } catch {
    return null;
  }
  for (const f of files.reverse()) {
    const text = readFileSync(join(dir, f), 'utf8');
    if (!text.includes(`To: ${email}`)) continue;
    const m = text.match(pattern);
    if (m) return m;
  }
  return null;
}

/** Waits for the mail to `email` and returns the first link matching `pattern`. */
export async function mailedLink(email, pattern) {
  await expect.poll(() => mailMatch(email, pattern), { timeout: 15_000 }).not.toBeNull();
  return mailMatch(email, pattern)[0];
}

const VERIFY_LINK = /https?:\/\/\S+email-verified\?token=([A-Za-z0-9_-]+)/;

/** Signs up through the API and opens the mailed verification link; the account can then sign in. */
export async function verifiedAccount(request, email, password = PASSWORD) {
  const res = await request.post('/api/iam/v1/register', {
    data: { email, password, confirm_password: password, agree: true },
  });
  expect(res.status()).toBe(200);
  await mailedLink(email, VERIFY_LINK);
  const token = mailMatch(email, VERIFY_LINK)[1];
  const v = await request.get(`/api/iam/v1/verify-email?token=${token}`);
  expect(v.status()).toBe(200);
}

/** Signs `email` in through the API and returns the bearer headers of the session. */
export async function apiSession(request, email, password = PASSWORD) {
  const res = await request.post('/api/iam/v2/login/password', { data: { email, password } });
  expect(res.status()).toBe(200);
  return { authorization: `Bearer ${(await res.json()).data.token}` };
}

/**
 * Puts real devices on the nearby list through the real protocol: each one registers as an agent
 * would (`/api/agent/v1/register`) and sends a first heartbeat, and one owner binds them, makes
 * them rentable at their price and sets their location. Returns the devices with their server ids.
 */
export async function seedNearbyDevices(request, devices) {
  const email = `owner-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  await verifiedAccount(request, email);
  const headers = await apiSession(request, email);
  const seeded = [];
  for (const d of devices) {
    const spec = { cpu_cores: 8, memory_bytes: 16 * 2 ** 30, disk_bytes: 512 * 2 ** 30, gpus: d.gpus ?? [] };
    const reg = await request.post('/api/agent/v1/register', { data: { type: d.type, name: d.name, spec } });
    expect(reg.status()).toBe(200);
    const { device_id, device_secret, pairing_code } = (await reg.json()).data;
    const hb = await request.post('/api/agent/v1/heartbeat', {
      headers: { authorization: `Bearer ${device_secret}` },
      data: { spec, metrics: { cpu_percent: 5, memory_used_bytes: 2 ** 30, disk_used_bytes: 2 ** 33 }, acks: [] },
    });
    expect(hb.status()).toBe(200);
    const calls = [
      ['post', '/api/ebs/v2/devices/link', { device_id, pairing_code }],
      ['put', `/api/ebs/v2/devices/${device_id}/sharing`, { mode: 'manual', rentable: true, price_per_hour: d.price_per_hour }],
      ['put', `/api/ebs/v2/devices/${device_id}/location`, { lat: d.lat, lng: d.lng }],
    ];
    for (const [method, url, data] of calls) {
      const res = await request[method](url, { headers, data });
      expect(res.status(), `${method} ${url}: ${await res.text()}`).toBe(200);
    }
    seeded.push({ ...d, id: device_id });
  }
  return seeded;
}

const SIGN_IN = {
  en: { email: 'Email', password: 'Password', submit: 'Sign In' },
  zh: { email: '邮箱', password: '密码', submit: '登录' },
};

/**
 * Fills and submits the sign-in form the page shows (the sign-in page, or a page that asks to sign
 * in first), once React has attached: text typed into the server's markup before is lost.
 */
export async function submitSignIn(page, email, { lang = 'en', password = PASSWORD } = {}) {
  const t = SIGN_IN[lang];
  await page.waitForFunction(() => window.__zmHydrated === true, null, { timeout: HYDRATE_MS });
  const form = page.locator('form', { has: page.getByLabel(t.password, { exact: true }) });
  await form.getByLabel(t.email, { exact: true }).fill(email);
  await form.getByLabel(t.password, { exact: true }).fill(password);
  await form.getByRole('button', { name: t.submit, exact: true }).click();
}

/**
 * Opens the sign-in page in `lang`, signs `email` in and waits to have left it: for `redirect`
 * (a console path) until it is there. `fresh` first forgets whoever was signed in on this page.
 */
export async function signIn(page, email, { lang = 'en', redirect = '', password = PASSWORD, fresh = false } = {}) {
  const url = `/auth/signin?language=${lang}${redirect ? `&redirect=${encodeURIComponent(redirect)}` : ''}`;
  if (fresh) {
    await page.goto(url);
    await page.evaluate(() => localStorage.clear());
  }
  await page.goto(url);
  await submitSignIn(page, email, { lang, password });
  if (redirect) {
    const path = redirect.split('?')[0].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    await expect(page).toHaveURL(new RegExp(path));
  } else {
    await expect(page).not.toHaveURL(/\/auth\/signin/);
  }
}

/** A run's own suffix for names and addresses (specs run many times on one data directory). */
export const stamp = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** A desktop's window and a phone's. */
export const SIZES = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

/** The `data` of a 200 answer (the test fails on any other, with the body). */
export async function ok(res) {
  const text = await res.text();
  expect(res.status(), text).toBe(200);
  return JSON.parse(text).data;
}

/**
 * A box bound by `auth` that speaks the agent protocol from here (it never runs anything):
 * `{ id, beat(body) }`, `beat` answering the commands the market sends it.
 */
export async function fakeBox(request, auth, name) {
  const spec = { cpu_cores: 8, memory_bytes: 34359738368, disk_bytes: 1099511627776, gpus: [] };
  const reg = await ok(await request.post('/api/agent/v1/register', { data: { type: 'Z-BOX', name, spec } }));
  await ok(await request.post('/api/ebs/v2/devices/link', { headers: auth, data: { device_id: reg.device_id, pairing_code: reg.pairing_code } }));
  const agent = { authorization: `Bearer ${reg.device_secret}` };
  const beat = async (body = {}) => (await ok(await request.post('/api/agent/v1/heartbeat', { headers: agent, data: { spec, ...body } }))).commands;
  await beat();
  return { id: reg.device_id, beat, secret: reg.device_secret };
}
