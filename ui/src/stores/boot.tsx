// The state the server rendered with (#zm-state), available to every component.
import { createContext, useContext } from 'react';
import type { AppCardData, AppDetails, DownloadLinks, ListPage, NearbyDevice, Order } from '../api/types';
import type { Lang } from '../i18n';

/** First-paint data of public pages, keyed by page (docs/ui-contract.md). */
interface InitialData {
  /** The list pages' keys hold cards: the API's apps without their description. */
  market?: ListPage<AppCardData>;
  /** The chosen apps shown above the list on the market's home (no category). The server sends
   * those `market` also holds as their ids; `normalizeBootState` puts the cards back. */
  marketTopPicks?: ListPage<AppCardData>;
  marketMore?: ListPage<AppCardData>;
  marketDetails?: AppDetails;
  nearby?: ListPage<NearbyDevice>;
  nearbyDetails?: NearbyDevice;
  /** The public demand board (/on-demand): the first page, distances from the map's centre. */
  onDemand?: ListPage<Order>;
  /** A written document's page (terms, privacy policy, guide): its HTML (src/ssr/documents.rs). */
  document?: { name: string; html: string; custom: boolean };
  /** The page's subject (an app or device id) does not exist: the page renders the 404 page. */
  notFound?: boolean;
}

export interface BootState {
  lang: Lang;
  theme: 'dark' | 'light';
  productName: string;
  isMobile: boolean;
  url: string;
  config: {
    downloadLinks: DownloadLinks;
    map: { tileUrl: string; center: { lat: number; lng: number }; zoom: number };
  };
  data: InitialData;
}

const defaultBootState: BootState = {
  lang: 'en',
  theme: 'dark',
  productName: 'ZMarket',
  isMobile: false,
  url: '/',
  config: {
    downloadLinks: { windows: '', mac: '', android: '', ios: '' },
    map: { tileUrl: '', center: { lat: 22.54, lng: 114.06 }, zoom: 3 },
  },
  data: {},
};

/** Fills what a partial or malformed state leaves out, so a render never throws on a missing field. */
export function normalizeBootState(raw: unknown): BootState {
  const s = (raw && typeof raw === 'object' ? raw : {}) as Partial<BootState>;
  const config = (s.config ?? {}) as Partial<BootState['config']>;
  const map = (config.map ?? {}) as Partial<BootState['config']['map']>;
  return {
    lang: s.lang === 'zh' ? 'zh' : 'en',
    theme: s.theme === 'light' ? 'light' : 'dark',
    productName: typeof s.productName === 'string' && s.productName ? s.productName : defaultBootState.productName,
    isMobile: Boolean(s.isMobile),
    url: typeof s.url === 'string' ? s.url : '/',
    config: {
      downloadLinks: { ...defaultBootState.config.downloadLinks, ...(config.downloadLinks ?? {}) },
      map: {
        tileUrl: typeof map.tileUrl === 'string' ? map.tileUrl : '',
        center: map.center && typeof map.center.lat === 'number' ? map.center : defaultBootState.config.map.center,
        zoom: typeof map.zoom === 'number' ? map.zoom : defaultBootState.config.map.zoom,
      },
    },
    data: s.data && typeof s.data === 'object' ? withTopPicksResolved(s.data) : {},
  };
}

/**
 * The server sends a top pick that the market list also carries as its id (src/market/ssr.rs
 * `refer_to_listed`): this puts the cards back. A reference the list does not resolve drops the
 * key, so the page fetches the picks rather than render a hole.
 */
function withTopPicksResolved(data: InitialData): InitialData {
  const top = data.marketTopPicks as ListPage<AppCardData | string> | undefined;
  if (!top || !Array.isArray(top.items) || !top.items.some((card) => typeof card === 'string')) return data;
  const listed = new Map((data.market?.items ?? []).map((app) => [app.id, app]));
  const items = top.items.map((card) => (typeof card === 'string' ? listed.get(card) : card));
  if (items.every((card): card is AppCardData => card !== undefined)) return { ...data, marketTopPicks: { ...top, items } };
  const { marketTopPicks: _unresolved, ...rest } = data;
  return rest;
}

export const BootContext = createContext<BootState>(defaultBootState);

export function useBoot(): BootState {
  return useContext(BootContext);
}

// The server data describes the first location only. Once the user navigates, pages fetch.
let firstLocationLeft = false;

export function markNavigated() {
  firstLocationLeft = true;
}

export function hasNavigated(): boolean {
  return firstLocationLeft;
}

/** For tests and for the server, which renders many first locations in one runtime. */
export function resetFirstLocation() {
  firstLocationLeft = false;
}

export function useInitialData<K extends keyof InitialData>(key: K): InitialData[K] | undefined {
  const boot = useBoot();
  return firstLocationLeft ? undefined : boot.data[key];
}

/** True when the server said the first location's subject does not exist. */
export function useInitialNotFound(): boolean {
  const boot = useBoot();
  return !firstLocationLeft && boot.data.notFound === true;
}
