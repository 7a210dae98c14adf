// Shared helpers: a page fixture that fails the test on console errors and hydration errors.
import { test as base, expect } from '@playwright/test';

export const test = base.extend({
  consoleErrors: async ({ page }, use) => {
    const errors = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    page.on('pageerror', (err) => errors.push(String(err)));
    await use(errors);
  },
});

/** True when the page hydrated the server markup (not a client-only fallback render). */
export async function expectHydrated(page) {
  await expect(page.locator('#root')).toHaveAttribute('data-ssr', '1');
  await page.waitForFunction(() => window.__zmHydrated === true, null, { timeout: 10_000 });
}

export { expect };
