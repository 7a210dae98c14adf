// The signed-in menu (GET /api/iam/v1/menus) as routes and as the side menu.
import type { MenuEntry } from '../api/types';

/** Every entry, hidden ones included: these become routes. */
export function flattenMenu(entries: MenuEntry[]): MenuEntry[] {
  const out: MenuEntry[] = [];
  const walk = (list: MenuEntry[]) => {
    for (const e of list) {
      out.push(e);
      if (e.children?.length) walk(e.children);
    }
  };
  walk(entries);
  return out;
}

/** What the side menu shows: entries flagged isHide are dropped (with their children). */
export function visibleMenu(entries: MenuEntry[]): MenuEntry[] {
  return entries
    .filter((e) => !e.meta?.isHide)
    .map((e) => ({ ...e, children: e.children ? visibleMenu(e.children) : undefined }));
}

export function isExternalLink(entry: MenuEntry): string | null {
  const link = entry.meta?.isLink;
  return typeof link === 'string' && /^https?:\/\//.test(link) ? link : null;
}
