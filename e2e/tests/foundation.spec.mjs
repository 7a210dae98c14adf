import { test, expect } from './fixtures.mjs';

test('market page renders on the server and loads with no console errors', async ({ page, consoleErrors }) => {
  const response = await page.goto('/market');
  expect(response.status()).toBe(200);
  expect(response.headers()['x-render']).toMatch(/server|cache/);
  await expect(page).toHaveTitle(/ - ZMarket$/);
  await expect(page.locator('#root')).not.toBeEmpty();
  await page.waitForLoadState('networkidle');
  expect(consoleErrors).toEqual([]);
});

test('root redirects to the market', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/market$/);
});

test('unknown path answers the 404 page', async ({ page }) => {
  const response = await page.goto('/definitely/not/here');
  expect(response.status()).toBe(404);
  await expect(page.getByText('Sorry, the page you visited does not exist')).toBeVisible();
});
