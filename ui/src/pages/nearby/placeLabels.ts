// Place names on the offline world map (assets/map/places.json, made by the script in
// assets/map/README.md): which labels to draw at a zoom, in the page's language, none overlapping
// another or a device marker. Pure: the map projects and the page measures text; the caller draws
// what comes back.

/** [English name, Chinese name, longitude, latitude, r]: r is the radius, in pixels at zoom 0, of
 *  the largest circle inside the country's largest polygon around the label point. */
type CountryRow = [string, string, number, number, number];
/** [English name, Chinese name, longitude, latitude, the zoom from which it is shown]. */
type CityRow = [string, string, number, number, number];

/** The shipped file: both lists in priority order (countries by area; cities: capitals, seats of
 *  provinces and states, the rest, each by population), so a label placed earlier wins over a
 *  later one it would overlap. */
export interface PlaceData {
  countries: CountryRow[];
  cities: CityRow[];
}

export type PlaceKind = 'country' | 'city';

/** A box in screen pixels: left, top, width, height. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PlacedLabel extends Box {
  kind: PlaceKind;
  text: string;
  lat: number;
  lng: number;
  /** Where the text is: centred on the point (countries), or right or left of the city's dot. */
  side: 'centre' | 'right' | 'left';
}

/** Line height of a label's box, in pixels (the CSS of .map-label draws inside it). */
export const LABEL_HEIGHT = 16;
/** Diameter of a city's dot, in pixels; the dot is centred on the city. */
export const CITY_DOT = 6;
/** The city's name starts this far from the outer edge of its dot (the left edge when the name is
 *  right of the dot, the right edge when it is left of it), in pixels. */
export const CITY_TEXT_OFFSET = 10;
/** A country is named once its inner circle is this much of the name's width. */
const COUNTRY_FIT = 0.7;
/** Free space kept around each label, in pixels. */
const GAP = 3;

interface View {
  zoom: number;
  /** What labels must not cover (the device markers). */
  obstacles?: Box[];
  width: number;
  height: number;
  /** Screen position of a point. */
  project: (lat: number, lng: number) => { x: number; y: number };
  /** Width of a label's text, in pixels. */
  measure: (text: string, kind: PlaceKind) => number;
}

/** The labels to draw in `view`, in `lang`: a country where its name fits inside it, a city from
 *  its zoom on (its name right of its dot, else left), each whole inside the view and only where it
 *  overlaps no marker and no label placed before it (bigger places first). */
export function placeLabels(data: PlaceData, lang: 'en' | 'zh', view: View): PlacedLabel[] {
  const scale = 2 ** view.zoom;
  const taken: Box[] = [...(view.obstacles ?? [])];
  const placed: PlacedLabel[] = [];
  // Whole inside the view (a name cut at the edge is no use; it comes back when panned to).
  const free = (b: Box) =>
    b.x >= 0 &&
    b.y >= 0 &&
    b.x + b.w <= view.width &&
    b.y + b.h <= view.height &&
    !taken.some((o) => b.x < o.x + o.w + GAP && o.x < b.x + b.w + GAP && b.y < o.y + o.h + GAP && o.y < b.y + b.h + GAP);
  const place = (label: PlacedLabel) => {
    taken.push(label);
    placed.push(label);
  };
  for (const [en, zh, lng, lat, r] of data.countries) {
    const text = lang === 'zh' ? zh : en;
    const w = view.measure(text, 'country');
    if (2 * r * scale < COUNTRY_FIT * w) continue;
    const p = view.project(lat, lng);
    const label: PlacedLabel = { kind: 'country', text, lat, lng, side: 'centre', x: p.x - w / 2, y: p.y - LABEL_HEIGHT / 2, w, h: LABEL_HEIGHT };
    if (free(label)) place(label);
  }
  for (const [en, zh, lng, lat, minZoom] of data.cities) {
    if (view.zoom < minZoom) continue;
    const text = lang === 'zh' ? zh : en;
    const w = CITY_TEXT_OFFSET + view.measure(text, 'city');
    const p = view.project(lat, lng);
    const y = p.y - LABEL_HEIGHT / 2;
    const right: PlacedLabel = { kind: 'city', text, lat, lng, side: 'right', x: p.x - CITY_DOT / 2, y, w, h: LABEL_HEIGHT };
    const left: PlacedLabel = { ...right, side: 'left', x: p.x + CITY_DOT / 2 - w };
    const label = [right, left].find(free);
    if (label) place(label);
  }
  return placed;
}
