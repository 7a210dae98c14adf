// The nearby map (its own lazy chunk with Leaflet): the offline world outline shipped in
// assets/map/world.json with the place names of assets/map/places.json, or raster tiles when
// map.tile_url is configured; two styles (light, dark); device markers clustered on a screen grid;
// a marker opens the device's details.
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import L from 'leaflet';
import { fetchNearby } from '../../api/market';
import type { ListPage, NearbyDevice } from '../../api/types';
import { LIST_LIMIT_MAX } from '../../constants';
import { useAsync } from '../../lib/useAsync';
import { useBoot } from '../../stores/boot';
import { useLang, useT } from '../../lib/i18n';
import { ErrorNote } from '../../components/placeholders';
import { formatDistance } from '../../lib/format';
import { paths } from '../../lib/paths';
import { storageGet, storageSet } from '../../lib/storage';
import { shownStatus, statusLabel } from '../../components/devices/deviceStatus';
import { useNearbyPoint } from '../../components/location';
import { CITY_DOT, LABEL_HEIGHT, placeLabels, type Box, type PlaceData, type PlaceKind } from './placeLabels';
import { BASE_MAP_COLORS, MAP_STYLES, MAP_STYLE_KEY, clusterPoints, clusterSize, type MapStyle } from './cluster';

/** The closest zoom the view is fitted to (one device, or the visitor alone). */
const FIT_MAX_ZOOM = 8;
/** Pixel size of a clustering cell. */
const CLUSTER_CELL = 56;
/** At most this many devices are put on the map (pages of LIST_LIMIT_MAX). */
const MAP_DEVICE_CAP = 1000;
const WORLD_URL = '/assets/map/world.json';
const PLACES_URL = '/assets/map/places.json';
/** The pane of the place names: above the world outline (overlay pane, 400), below the markers (600). */
const LABEL_PANE = 'labels';
/** The credit the offline data asks for (GeoNames' CC BY 4.0): proper names, the same in every
 *  language, so marked as not to translate (a browser's translator and the zh walk leave it). */
const OFFLINE_ATTRIBUTION = '<span translate="no">© GeoNames (CC BY 4.0) · Natural Earth · Unicode CLDR</span>';
/** Font size of the place names, in pixels (the CSS of .map-label uses the same). */
const LABEL_FONT_PX = 12;

async function fetchAllNearby(at: { lat: number; lng: number }, signal: AbortSignal): Promise<ListPage<NearbyDevice>> {
  const first = await fetchNearby({ lat: at.lat, lng: at.lng, offset: 0, limit: LIST_LIMIT_MAX }, signal);
  const items = [...(first.items ?? [])];
  while (items.length < Math.min(first.total, MAP_DEVICE_CAP)) {
    const next = await fetchNearby({ lat: at.lat, lng: at.lng, offset: items.length, limit: LIST_LIMIT_MAX }, signal);
    if (!next.items?.length) break;
    items.push(...next.items);
  }
  return { items, total: first.total };
}

function readStyle(): MapStyle {
  return storageGet(MAP_STYLE_KEY) === 'dark' ? 'dark' : 'light';
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Measures label text in the map's font on a canvas (country names are bold), remembering each. */
function textMeasurer(container: HTMLElement): (text: string, kind: PlaceKind) => number {
  const ctx = document.createElement('canvas').getContext('2d');
  const family = getComputedStyle(container).fontFamily || 'sans-serif';
  const seen = new Map<string, number>();
  return (text, kind) => {
    const key = `${kind}:${text}`;
    let w = seen.get(key);
    if (w === undefined) {
      if (ctx) ctx.font = `${kind === 'country' ? 600 : 400} ${LABEL_FONT_PX}px ${family}`;
      w = Math.ceil(ctx ? ctx.measureText(text).width : text.length * LABEL_FONT_PX);
      seen.set(key, w);
    }
    return w;
  };
}

/** Where the device markers of `layer` are on the screen (the place names keep clear of them). */
function markerBoxes(map: L.Map, layer: L.LayerGroup): Box[] {
  return layer.getLayers().map((l) => {
    const m = l as L.Marker;
    const { iconSize = [0, 0], iconAnchor = [0, 0] } = m.options.icon?.options ?? {};
    const corner = map.latLngToContainerPoint(m.getLatLng()).subtract(iconAnchor);
    const size = L.point(iconSize);
    return { x: corner.x, y: corner.y, w: size.x, h: size.y };
  });
}

export default function MapView() {
  const t = useT();
  const lang = useLang();
  const boot = useBoot();
  const navigate = useNavigate();
  const { tileUrl, center, zoom } = boot.config.map;
  const attribution = (boot.config.map as { attribution?: string }).attribution ?? '';
  const { at, own } = useNearbyPoint();
  const state = useAsync((signal) => fetchAllNearby(at, signal), [at.lat, at.lng]);
  const items = useMemo(() => state.data?.items ?? [], [state.data]);
  const [style, setStyle] = useState<MapStyle>(readStyle);
  const [baseError, setBaseError] = useState(false);
  const [places, setPlaces] = useState<PlaceData | null>(null);
  const el = useRef<HTMLDivElement>(null);
  const mapRef = useRef<L.Map | null>(null);
  const worldRef = useRef<L.GeoJSON | null>(null);
  const markersRef = useRef<L.LayerGroup | null>(null);
  const styleRef = useRef(style);
  styleRef.current = style;
  const navigateRef = useRef(navigate);
  navigateRef.current = navigate;

  // The map itself, once.
  useEffect(() => {
    if (!el.current) return;
    const map = L.map(el.current, {
      center: [center.lat, center.lng],
      zoom,
      minZoom: 2,
      maxZoom: tileUrl ? 18 : 10,
      worldCopyJump: true,
      preferCanvas: true,
      attributionControl: Boolean(tileUrl && attribution),
      zoomControl: false,
    });
    L.control.zoom({ zoomInTitle: t('zoom_in'), zoomOutTitle: t('zoom_out') }).addTo(map);
    mapRef.current = map;
    markersRef.current = L.layerGroup().addTo(map);
    const labelPane = map.createPane(LABEL_PANE);
    labelPane.style.zIndex = '450';
    labelPane.style.pointerEvents = 'none';
    const controller = new AbortController();
    if (tileUrl) {
      L.tileLayer(tileUrl, { attribution, maxZoom: 18 }).addTo(map);
    } else {
      L.control.attribution({ prefix: false }).addAttribution(OFFLINE_ATTRIBUTION).addTo(map);
      fetch(WORLD_URL, { signal: controller.signal })
        .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
        .then((geo) => {
          if (controller.signal.aborted) return;
          const colors = BASE_MAP_COLORS[styleRef.current];
          worldRef.current = L.geoJSON(geo, {
            interactive: false,
            style: () => ({ color: colors.border, weight: 0.8, fillColor: colors.land, fillOpacity: 1 }),
          }).addTo(map);
          worldRef.current.bringToBack();
        })
        .catch(() => {
          if (!controller.signal.aborted) setBaseError(true);
        });
      // The place names come after the outline; without them the map still works.
      fetch(PLACES_URL, { signal: controller.signal })
        .then((r) => (r.ok ? (r.json() as Promise<PlaceData>) : Promise.reject(new Error(String(r.status)))))
        .then((data) => {
          if (!controller.signal.aborted) setPlaces(data);
        })
        .catch((err: unknown) => {
          if (!controller.signal.aborted) console.warn('place names not loaded', err);
        });
    }
    return () => {
      controller.abort();
      map.remove();
      mapRef.current = null;
      worldRef.current = null;
      markersRef.current = null;
    };
    // The configuration does not change while the page is open.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // The view: the devices shown (the visitor's location with them), else the visitor's location,
  // else the configured centre and zoom. Once per loaded list, so the visitor's own panning stays.
  useEffect(() => {
    const map = mapRef.current;
    if (!map || !state.data) return;
    const points: [number, number][] = items.map((d) => [d.lat, d.lng]);
    if (own && points.length) points.push([at.lat, at.lng]);
    if (points.length) {
      map.fitBounds(L.latLngBounds(points).pad(0.2), { maxZoom: FIT_MAX_ZOOM, animate: false });
    } else if (own) {
      map.setView([at.lat, at.lng], FIT_MAX_ZOOM, { animate: false });
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [state.data]);

  // Style: base map colours (offline) or a filter on the tiles (CSS), remembered.
  useEffect(() => {
    storageSet(MAP_STYLE_KEY, style);
    const colors = BASE_MAP_COLORS[style];
    worldRef.current?.setStyle({ color: colors.border, fillColor: colors.land });
  }, [style]);

  // Markers, re-clustered whenever the view changes.
  useEffect(() => {
    const map = mapRef.current;
    const layer = markersRef.current;
    if (!map || !layer) return;
    const draw = () => {
      layer.clearLayers();
      const projected = items.map((d) => {
        const pt = map.latLngToLayerPoint([d.lat, d.lng]);
        return { item: d, x: pt.x, y: pt.y };
      });
      for (const c of clusterPoints(projected, CLUSTER_CELL)) {
        const pos = map.layerPointToLatLng([c.x, c.y]);
        if (c.items.length === 1) {
          const d = c.items[0];
          const marker = L.marker(pos, {
            title: d.name,
            alt: d.name,
            keyboard: true,
            icon: L.divIcon({
              className: `map-marker status-${shownStatus(d.status, false)}`,
              html: '<span></span>',
              iconSize: [22, 22],
              iconAnchor: [11, 11],
            }),
          });
          marker.on('click keypress', () => navigateRef.current(paths.nearby.details(d.id)));
          layer.addLayer(marker);
        } else {
          const bounds = L.latLngBounds(c.items.map((d) => [d.lat, d.lng] as [number, number]));
          const n = c.items.length;
          const marker = L.marker(pos, {
            title: t('devices_here', { count: String(n) }),
            keyboard: true,
            icon: L.divIcon({
              className: `map-cluster map-cluster-${clusterSize(n)}`,
              html: `<span>${n}</span>`,
              iconSize: [40, 40],
              iconAnchor: [20, 20],
            }),
          });
          const samePlace = bounds.getNorthEast().equals(bounds.getSouthWest(), 1e-6);
          if (samePlace || map.getZoom() >= map.getMaxZoom()) {
            const links = c.items
              .map((d) => `<li><a href="${paths.nearby.details(d.id)}" data-id="${escapeHtml(d.id)}">${escapeHtml(d.name)}</a></li>`)
              .join('');
            marker.bindPopup(`<ul class="map-popup-list">${links}</ul>`);
          } else {
            marker.on('click keypress', () => map.fitBounds(bounds.pad(0.3), { maxZoom: map.getMaxZoom() }));
          }
          layer.addLayer(marker);
        }
      }
    };
    draw();
    map.on('zoomend', draw);
    // Popup links navigate inside the app (Leaflet stops clicks inside a popup from reaching the map).
    const onPopupClick = (e: MouseEvent) => {
      const a = (e.target as HTMLElement).closest('a[data-id]');
      if (!a) return;
      e.preventDefault();
      navigateRef.current(paths.nearby.details(a.getAttribute('data-id') ?? ''));
    };
    const onPopupOpen = (e: L.PopupEvent) => e.popup.getElement()?.addEventListener('click', onPopupClick);
    map.on('popupopen', onPopupOpen);
    return () => {
      map.off('zoomend', draw);
      map.off('popupopen', onPopupOpen);
    };
  }, [items, t]);

  // Place names in the page's language, laid out again whenever the view changes (after the
  // markers, which they keep clear of: this effect comes after theirs, zoomend before moveend).
  useEffect(() => {
    const map = mapRef.current;
    const markers = markersRef.current;
    if (!map || !markers || !places || !el.current) return;
    const layer = L.layerGroup().addTo(map);
    const measure = textMeasurer(el.current);
    const draw = () => {
      layer.clearLayers();
      const size = map.getSize();
      const labels = placeLabels(places, lang, {
        zoom: map.getZoom(),
        width: size.x,
        height: size.y,
        project: (lat, lng) => map.latLngToContainerPoint([lat, lng]),
        measure,
        obstacles: markerBoxes(map, markers),
      });
      for (const l of labels) {
        const city = l.kind === 'city';
        const icon = L.divIcon({
          className: `map-label map-label-${l.kind} map-label-${l.side}`,
          html: city ? `<i></i><span>${escapeHtml(l.text)}</span>` : escapeHtml(l.text),
          iconSize: [l.w, l.h],
          iconAnchor: [l.side === 'right' ? CITY_DOT / 2 : l.side === 'left' ? l.w - CITY_DOT / 2 : l.w / 2, LABEL_HEIGHT / 2],
        });
        layer.addLayer(L.marker([l.lat, l.lng], { icon, pane: LABEL_PANE, interactive: false, keyboard: false }));
      }
    };
    draw();
    map.on('moveend resize', draw);
    return () => {
      map.off('moveend resize', draw);
      layer.remove();
    };
  }, [places, lang, items]);

  return (
    <div className={`map-view map-style-${style}`}>
      <div className="map-stage">
        <div ref={el} className="map-canvas" role="region" aria-label={t('nearby_map')} data-testid="map" />
        <div className="map-style-switch" role="group" aria-label={t('map_style')}>
          {MAP_STYLES.map((s) => (
            <button
              key={s}
              type="button"
              className={s === style ? 'active' : ''}
              aria-pressed={s === style}
              onClick={() => setStyle(s)}
            >
              {t(s === 'light' ? 'map_style_light' : 'map_style_dark')}
            </button>
          ))}
        </div>
        {baseError ? <p className="map-note map-note-error">{t('map_base_failed')}</p> : null}
      </div>
      <aside className="map-side">
        <h2>{t('devices_on_map', { count: String(items.length) })}</h2>
        {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
        <ul className="map-list">
          {items.map((d) => (
            <li key={d.id}>
              <Link to={paths.nearby.details(d.id)}>{d.name}</Link>
              <span className="muted small">
                {statusLabel(t, d.status, false)} · {formatDistance(d.distance_km)}
              </span>
            </li>
          ))}
        </ul>
      </aside>
    </div>
  );
}
