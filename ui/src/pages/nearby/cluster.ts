// Grid clustering for the map: points that fall into the same screen cell (in pixels at the
// current zoom) become one cluster drawn at their mean position. Small, deterministic, no plugin.

interface Projected<T> {
  item: T;
  x: number;
  y: number;
}

interface Cluster<T> {
  items: T[];
  /** Mean screen position of the members. */
  x: number;
  y: number;
}

/** Groups projected points by `cell`-pixel squares; clusters come out in first-seen order. */
export function clusterPoints<T>(points: Projected<T>[], cell: number): Cluster<T>[] {
  const size = cell > 0 ? cell : 1;
  const byKey = new Map<string, { items: T[]; sx: number; sy: number }>();
  for (const p of points) {
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) continue;
    const key = `${Math.floor(p.x / size)}:${Math.floor(p.y / size)}`;
    const c = byKey.get(key);
    if (c) {
      c.items.push(p.item);
      c.sx += p.x;
      c.sy += p.y;
    } else {
      byKey.set(key, { items: [p.item], sx: p.x, sy: p.y });
    }
  }
  return [...byKey.values()].map((c) => ({ items: c.items, x: c.sx / c.items.length, y: c.sy / c.items.length }));
}

/** Diameter class of a cluster icon by member count. */
export function clusterSize(count: number): 'small' | 'medium' | 'large' {
  return count < 10 ? 'small' : count < 100 ? 'medium' : 'large';
}

export type MapStyle = 'light' | 'dark';
export const MAP_STYLES: MapStyle[] = ['light', 'dark'];
export const MAP_STYLE_KEY = 'zm_map_style';

/** Colours of the offline world base map in each style. */
export const BASE_MAP_COLORS: Record<MapStyle, { sea: string; land: string; border: string }> = {
  light: { sea: '#dfe9f5', land: '#ffffff', border: '#b7c3d6' },
  dark: { sea: '#0e1726', land: '#223049', border: '#3b4a66' },
};
