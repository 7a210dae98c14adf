// The server's reused card markup (lib/fragments.tsx, docs/performance.md): a page rendered with
// kept cards is the page rendered afresh, a card's key covers everything the card shows, and a
// changed card, language or path prefix is rendered again.
import { describe, expect, it } from 'vitest';
import { renderToString } from 'react-dom/server';
import { MemoryRouter } from 'react-router';
import { render } from '../src/server';
import { AppCard, cardInputs } from '../src/components/apps/cards';
import { LangContext } from '../src/lib/i18n';
import { FragmentStore, FragmentsContext, Reused } from '../src/lib/fragments';
import type { App } from '../src/api/types';
import { app, state } from './fixtures.mjs';

const apps = [0, 1, 2].map((i) => ({ ...app, id: `app-${i}`, name: `App number ${i}` })) as unknown as App[];
const market = (items: unknown[], overrides: Record<string, unknown> = {}) =>
  JSON.stringify(state({ data: { market: { items, total: items.length }, marketTopPicks: { items: items.slice(0, 1), total: 1 } }, ...overrides }));

describe('reused cards', () => {
  it('render the same page as a fresh render, with no marker left', () => {
    const first = render('/market', market(apps)).html;
    const again = render('/market?again=1', market(apps)).html;
    expect(again).toBe(first);
    expect(first).not.toContain('data-zm-');
    expect(first).toContain('App number 2');
  });

  it('render a changed app, another language and the phone paths again', () => {
    render('/market', market(apps));
    const changed = apps.map((a, i) => (i === 1 ? { ...a, name: 'Renamed', price_per_hour: { from: 99, offers: 2 } } : a));
    const html = render('/market', market(changed)).html;
    expect(html).toContain('Renamed');
    expect(html).not.toContain('App number 1');
    expect(html).toContain('0.99');
    expect(render('/market', market(apps, { lang: 'zh' })).html).toContain('/market/details?id=app-0');
    const zh = render('/market', market(apps, { lang: 'zh' })).html;
    expect(zh).not.toContain('offer'); // the English price line is not reused in Chinese
    const phone = render('/m/market', market(apps, { isMobile: true })).html;
    expect(phone).toContain('/m/market/details?id=app-0');
    expect(phone).not.toContain('"/market/details?id=app-0"');
  });
});

function card(a: unknown, path = '/market', lang: 'en' | 'zh' = 'en') {
  return renderToString(
    <MemoryRouter initialEntries={[path]}>
      <LangContext.Provider value={lang}>
        <AppCard app={a as App} />
      </LangContext.Provider>
    </MemoryRouter>,
  );
}

/** Every leaf of an app changed in turn. */
function variants(value: unknown, set: (v: unknown) => unknown): unknown[] {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([k, v]) => variants(v, (nv) => set({ ...(value as object), [k]: nv })));
  }
  const changed = typeof value === 'string' ? `${value}-x` : typeof value === 'number' ? value + 7 : typeof value === 'boolean' ? !value : 5;
  return [set(changed), set(null)];
}

describe('cardInputs', () => {
  it('changes whenever the markup of the card changes', () => {
    const fixture = { ...app, kind: 'rent', top_pick: true, price_per_hour: { from: null, offers: 0 } };
    const base = card(fixture);
    const key = JSON.stringify(cardInputs(fixture as unknown as App));
    let shown = 0;
    for (const v of variants(fixture, (x) => x)) {
      let markup: string;
      try {
        markup = card(v);
      } catch {
        continue; // a value the card cannot show at all
      }
      if (markup !== base) {
        shown++;
        expect(JSON.stringify(cardInputs(v as App)), JSON.stringify(v)).not.toBe(key);
      }
    }
    expect(shown).toBeGreaterThan(8);
  });
});

describe('FragmentStore', () => {
  function page(store: FragmentStore | null, names: string[]) {
    store?.begin();
    const html = renderToString(
      <FragmentsContext.Provider value={store}>
        <ul>
          {names.map((n, i) => (
            <Reused key={i} inputs={[n]}>
              <li>
                {n} <b>{n.toUpperCase()}</b>
                <Reused inputs={['inner', n]}>
                  <i>{n}</i>
                </Reused>
              </li>
            </Reused>
          ))}
        </ul>
      </FragmentsContext.Provider>,
    );
    return store ? store.finish(html) : html;
  }
  it('keeps each piece once and fills it in later renders', () => {
    const store = new FragmentStore();
    const fresh = page(null, ['a', 'b', 'a']);
    expect(page(store, ['a', 'b', 'a'])).toBe(fresh);
    expect(store.size).toBe(2);
    expect(page(store, ['a', 'b', 'a'])).toBe(fresh);
    expect(page(store, ['c', 'a'])).toBe(page(null, ['c', 'a']));
    expect(store.size).toBe(3);
  });
});
