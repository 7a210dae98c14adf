// The console pages are named twice, by the server's menu (src/iam/menus.rs: path, component, title
// key of each entry) and by lib/paths.ts (`paths.console`): the two lists must be the same, in the
// same order, so a page added, renamed or dropped on one side alone fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { componentName, consolePages } from '../src/lib/paths';

const menusRs = readFileSync(new URL('../../src/iam/menus.rs', import.meta.url), 'utf8');

/** The body of `const ITEMS: &[Item] = &[ … ];` */
function itemsBlock(source: string): string {
  const m = /const ITEMS: &\[Item\] = &\[([\s\S]*?)\n\];/.exec(source);
  if (!m) throw new Error('src/iam/menus.rs: no `const ITEMS: &[Item] = &[…];` found');
  return m[1];
}

/** Each entry of ITEMS as the menu sends it: `item(path, name, component, icon, title)` or `hidden(parent, path, name, component, title)`. */
function menuEntries(source: string) {
  const entries: { path: string; component: string; title: string }[] = [];
  const call = /\b(item|hidden)\(([^)]*)\)/g;
  for (const m of itemsBlock(source).matchAll(call)) {
    const args = [...m[2].matchAll(/"([^"]*)"/g)].map((a) => a[1]);
    if (args.length !== 5) throw new Error(`src/iam/menus.rs: ${m[0]} does not have 5 string arguments`);
    const [path, , component, , title] = m[1] === 'item' ? args : [args[1], args[2], args[3], '', args[4]];
    entries.push({ path, component, title });
  }
  return entries;
}

describe('console paths: src/iam/menus.rs = lib/paths.ts', () => {
  const entries = menuEntries(menusRs);

  it('the menu has the console pages of paths.ts, in the same order, with the same component and title key', () => {
    expect(entries.length).toBeGreaterThan(0);
    expect(entries).toEqual(consolePages.map((p) => ({ path: p.pattern, component: componentName(p), title: p.titleKey })));
  });

  it('every path the menu grants (paths_for, the operator list) is a console page', () => {
    const known = new Set(consolePages.map((p) => p.pattern));
    const granted = [...menusRs.replace(itemsBlock(menusRs), '').matchAll(/"(\/[^"]*)"/g)].map((m) => m[1]);
    expect(granted.length).toBeGreaterThan(0);
    expect(granted.filter((p) => !known.has(p))).toEqual([]);
  });
});
