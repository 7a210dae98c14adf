// The server's page state as the app reads it (stores/boot.tsx normalizeBootState).
import { describe, expect, it } from 'vitest';
import { normalizeBootState } from '../src/stores/boot';
import { app } from './fixtures.mjs';

const other = { ...app, id: 'app-2', name: 'Other' };

describe('the top picks of the market home', () => {
  it('put back the cards the server sent as ids of the list', () => {
    const boot = normalizeBootState({ data: { market: { items: [app, other], total: 2 }, marketTopPicks: { items: ['app-2', { ...app, id: 'app-9' }], total: 2 } } });
    expect(boot.data.marketTopPicks).toEqual({ items: [other, { ...app, id: 'app-9' }], total: 2 });
    expect(boot.data.market?.items).toEqual([app, other]);
  });

  it('are left out, to be fetched, when an id is not in the list', () => {
    const boot = normalizeBootState({ data: { market: { items: [app], total: 1 }, marketTopPicks: { items: ['app-1', 'gone'], total: 2 } } });
    expect(boot.data.marketTopPicks).toBeUndefined();
    expect(boot.data.market?.items).toEqual([app]);
  });

  it('whole cards pass as they are', () => {
    const data = { market: { items: [app], total: 1 }, marketTopPicks: { items: [app], total: 1 } };
    expect(normalizeBootState({ data }).data).toEqual(data);
  });
});
