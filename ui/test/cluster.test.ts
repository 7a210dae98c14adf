import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { clusterPoints, clusterSize } from '../src/pages/nearby/cluster';
import { placeLabels, type PlaceData, type PlacedLabel } from '../src/pages/nearby/placeLabels';

describe('grid clustering', () => {
  it('keeps far points apart and merges points in one cell at their mean', () => {
    const clusters = clusterPoints(
      [
        { item: 'a', x: 10, y: 10 },
        { item: 'b', x: 30, y: 50 },
        { item: 'c', x: 300, y: 300 },
      ],
      60,
    );
    expect(clusters).toHaveLength(2);
    expect(clusters[0]).toEqual({ items: ['a', 'b'], x: 20, y: 30 });
    expect(clusters[1]).toEqual({ items: ['c'], x: 300, y: 300 });
  });

  it('splits the same points when the cells are smaller (zooming in)', () => {
    const pts = [
      { item: 1, x: 10, y: 10 },
      { item: 2, x: 50, y: 10 },
    ];
    expect(clusterPoints(pts, 100)).toHaveLength(1);
    expect(clusterPoints(pts, 20)).toHaveLength(2);
  });

  it('ignores points that cannot be placed', () => {
    expect(clusterPoints([{ item: 1, x: NaN, y: 0 }], 60)).toEqual([]);
  });

  it('sizes cluster icons by count', () => {
    expect(clusterSize(2)).toBe('small');
    expect(clusterSize(10)).toBe('medium');
    expect(clusterSize(250)).toBe('large');
  });
});

describe('place names on the offline map', () => {
  // The shipped data and Web Mercator as Leaflet draws it, on a 980 x 700 view centred at `at`.
  const data = JSON.parse(readFileSync(new URL('../../assets/map/places.json', import.meta.url), 'utf8')) as PlaceData;
  const world = (lat: number, lng: number, zoom: number) => {
    const s = 256 * 2 ** zoom;
    const phi = (lat * Math.PI) / 180;
    return { x: ((lng + 180) / 360) * s, y: (0.5 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / (2 * Math.PI)) * s };
  };
  const view = (zoom: number, at = { lat: 31, lng: 115 }) => {
    const c = world(at.lat, at.lng, zoom);
    return {
      zoom,
      width: 980,
      height: 700,
      project: (lat: number, lng: number) => {
        const p = world(lat, lng, zoom);
        return { x: p.x - c.x + 490, y: p.y - c.y + 350 };
      },
      // About 7 px a Latin letter, 12 px a Chinese character (12 px text).
      measure: (text: string) => [...text].reduce((w, ch) => w + (ch.charCodeAt(0) > 0x2e80 ? 12 : 7), 0),
    };
  };
  const texts = (labels: PlacedLabel[], kind: string) => labels.filter((l) => l.kind === kind).map((l) => l.text);

  it('names the countries that fit, in the page language, and the big cities only closer in', () => {
    const en = placeLabels(data, 'en', view(3));
    expect(texts(en, 'country')).toEqual(expect.arrayContaining(['China', 'Mongolia', 'India']));
    expect(texts(en, 'country')).not.toContain('Taiwan'); // too small to hold its name at zoom 3
    expect(texts(en, 'city')).toEqual([]);
    const zh = placeLabels(data, 'zh', view(3));
    expect(texts(zh, 'country')).toEqual(expect.arrayContaining(['中国', '蒙古', '印度']));
    expect(texts(placeLabels(data, 'en', view(6, { lat: 23.5, lng: 120 })), 'country')).toContain('Taiwan');

    expect(texts(placeLabels(data, 'en', view(4)), 'city')).toContain('Beijing');
    expect(texts(placeLabels(data, 'en', view(5)), 'city')).not.toContain('Nanchang');
    expect(texts(placeLabels(data, 'zh', view(6)), 'city')).toEqual(expect.arrayContaining(['南昌', '武汉', '南京', '上海']));
  });

  it('never draws two labels over each other, nor one not whole inside the view', () => {
    for (const zoom of [2, 3, 4, 5, 6, 7, 8]) {
      for (const lang of ['en', 'zh'] as const) {
        const labels = placeLabels(data, lang, view(zoom));
        for (const [i, a] of labels.entries()) {
          expect(a.x >= 0 && a.y >= 0 && a.x + a.w <= 980 && a.y + a.h <= 700, a.text).toBe(true);
          for (const b of labels.slice(i + 1)) {
            const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
            expect(overlap, `${a.text} / ${b.text} at zoom ${zoom}`).toBe(false);
          }
        }
      }
    }
  });

  it('keeps the bigger place where two would overlap', () => {
    const two: PlaceData = {
      countries: [],
      cities: [
        ['Big', '大', 115, 31, 4],
        ['Small', '小', 115.01, 31, 4],
        ['Far', '远', 118, 31, 4],
      ],
    };
    expect(texts(placeLabels(two, 'en', view(5)), 'city')).toEqual(['Big', 'Far']);
  });

  it('keeps clear of the device markers: a city name goes left of its dot, else is left out', () => {
    const one: PlaceData = { countries: [['Land', '陆', 115, 31, 50]], cities: [['Town', '镇', 115, 31, 4]] };
    const v = view(5);
    const free = placeLabels(one, 'en', v);
    expect(free.map((l) => [l.text, l.side])).toEqual([['Land', 'centre']]); // the town is under the country's name
    const town = placeLabels({ countries: [], cities: one.cities }, 'en', v);
    expect(town.map((l) => l.side)).toEqual(['right']);
    // At the right edge of the view its name goes left of the dot.
    const edge = { ...v, width: town[0].x + town[0].w - 1 };
    expect(placeLabels({ countries: [], cities: one.cities }, 'en', edge).map((l) => l.side)).toEqual(['left']);
    // A marker just right of the town: its name goes left; markers on both sides: no name.
    const rightOf = { x: town[0].x + 20, y: town[0].y, w: 22, h: 22 };
    expect(placeLabels({ countries: [], cities: one.cities }, 'en', { ...v, obstacles: [rightOf] }).map((l) => l.side)).toEqual(['left']);
    const leftOf = { x: town[0].x - 40, y: town[0].y, w: 22, h: 22 };
    expect(placeLabels({ countries: [], cities: one.cities }, 'en', { ...v, obstacles: [rightOf, leftOf] })).toEqual([]);
    // A marker on the country's name hides it.
    expect(placeLabels({ countries: one.countries, cities: [] }, 'en', { ...v, obstacles: [{ x: 480, y: 340, w: 22, h: 22 }] })).toEqual([]);
  });
});
