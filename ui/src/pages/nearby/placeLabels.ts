// Place names on the offline world map (assets/map/places.json, made by the script in
// assets/map/README.md): which labels to draw at a zoom, in the page's language, none overlapping.
// Pure: the map projects and the page measures text; the caller draws what comes back.

/** [English name, Chinese name, longitude, latitude, r]: r is the radius, in pixels at zoom 0, of
 *  the largest circle inside the country's largest polygon around the label point. */
type CountryRow = [string, string, number, number, number];
/** [English name, Chinese name, longitude, latitude, the zoom from which it is shown]. */
type CityRow = [string, string, number, number, number];

/** The shipped file: both lists in priority order (countries by area, cities capitals first, then
 *  by population), so a label drawn earlier wins over a later one it would overlap. */
export interface PlaceData {
  countries: CountryRow[];
  cities: CityRow[];
}

export type PlaceKind = 'country' | 'city';

export interface PlacedLabel {
  kind: PlaceKind;
  text: string;
  lat: number;
  lng: number;
  /** The label's box in screen pixels: left, top, width, height. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Line height of a label's box, in pixels (the CSS of .map-label draws inside it). */
export const LABEL_HEIGHT = 16;
/** Diameter of a city's dot, in pixels; the dot is centred on the city. */
export const CITY_DOT = 6;
/** The city's name starts this far right of the left edge of its dot, in pixels. */
export const CITY_TEXT_OFFSET = 10;
/** A country is named once its inner circle is this much of the name's width. */
const COUNTRY_FIT = 0.7;
/** Free space kept around each label, in pixels. */
const GAP = 3;

interface View {
  zoom: number;
  width: number;
  height: number;
  /** Screen position of a point. */
  project: (lat: number, lng: number) => { x: number; y: number };
  /** Width of a label's text, in pixels. */
  measure: (text: string, kind: PlaceKind) => number;
}

/** The labels to draw in `view`, in `lang`: a country where its name fits inside it, a city from
 *  its zoom on, each only where it overlaps no label placed before it (bigger places first). */
export function placeLabels(data: PlaceData, lang: 'en' | 'zh', view: View): PlacedLabel[] {
  const scale = 2 ** view.zoom;
  const placed: PlacedLabel[] = [];
  const tryPlace = (kind: PlaceKind, text: string, lat: number, lng: number, box: (p: { x: number; y: number }, textWidth: number) => [number, number, number]) => {
    const [x, y, w] = box(view.project(lat, lng), view.measure(text, kind));
    const h = LABEL_HEIGHT;
    if (x + w < 0 || y + h < 0 || x > view.width || y > view.height) return;
    const hit = placed.some((o) => x < o.x + o.w + GAP && o.x < x + w + GAP && y < o.y + o.h + GAP && o.y < y + h + GAP);
    if (!hit) placed.push({ kind, text, lat, lng, x, y, w, h });
  };
  for (const [en, zh, lng, lat, r] of data.countries) {
    const text = lang === 'zh' ? zh : en;
    if (2 * r * scale < COUNTRY_FIT * view.measure(text, 'country')) continue;
    tryPlace('country', text, lat, lng, (p, w) => [p.x - w / 2, p.y - LABEL_HEIGHT / 2, w]);
  }
  for (const [en, zh, lng, lat, minZoom] of data.cities) {
    if (view.zoom < minZoom) continue;
    tryPlace('city', lang === 'zh' ? zh : en, lat, lng, (p, w) => [p.x - CITY_DOT / 2, p.y - LABEL_HEIGHT / 2, CITY_TEXT_OFFSET + w]);
  }
  return placed;
}
