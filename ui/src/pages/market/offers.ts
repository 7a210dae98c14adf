// The Rent dialog's offers (docs/api.md §Offers and the meter): the sort and filters a renter picks,
// as the query the server reads, and what an offer says of its box in words: spec, GPU memory,
// reliability measured from its beats, distance.
import type { OfferFit } from '../../api/gpus';
import type { TFunction } from '../../lib/i18n';
import { formatDistance, formatSize } from '../../lib/format';

export type OfferSort = 'price' | 'reliability' | 'distance' | 'vram';
export const OFFER_SORTS: OfferSort[] = ['price', 'reliability', 'distance', 'vram'];
/** Minimum uptimes offered in the filter (share of the last 30 days). */
export const RELIABILITY_STEPS = [0.9, 0.95, 0.99];

export interface OfferFilters {
  sort: OfferSort;
  gpuModel: string;
  /** GiB, as typed. */
  minVramGib: string;
  minCuda: string;
  /** '' (any) or a share such as '0.95'. */
  minReliability: string;
}

export const NO_FILTERS: OfferFilters = { sort: 'price', gpuModel: '', minVramGib: '', minCuda: '', minReliability: '' };

const GIB = 1024 ** 3;

/** The query of `filters` from the point `at`: only what is set; VRAM in bytes. */
export function offerQuery(filters: OfferFilters, at: { lat: number; lng: number }): Record<string, string | number> {
  const q: Record<string, string | number> = { lat: at.lat, lng: at.lng };
  if (filters.sort !== 'price') q.sort = filters.sort;
  if (filters.gpuModel.trim()) q.gpu_model = filters.gpuModel.trim();
  const gib = filters.minVramGib.trim();
  // A figure that is not a number goes as typed: the server names the filter it refuses.
  if (gib) q.min_vram = Number.isFinite(Number(gib)) ? Math.round(Number(gib) * GIB) : gib;
  if (filters.minCuda.trim()) q.min_cuda = filters.minCuda.trim();
  if (filters.minReliability) q.min_reliability = filters.minReliability;
  return q;
}

/** Whether any filter narrows the offers (the sort does not). */
export function filtering(filters: OfferFilters): boolean {
  return !!(filters.gpuModel.trim() || filters.minVramGib.trim() || filters.minCuda.trim() || filters.minReliability);
}

const percent = (share: number) => `${Math.floor(share * 1000) / 10}%`;

/** What an offer says of its box, in order: spec, GPU memory, reliability, distance. */
export function offerFacts(t: TFunction, f: OfferFit): string[] {
  const facts = [t('offer_spec', { cores: f.spec.cpu_cores, memory: formatSize(f.spec.memory_bytes), disk: formatSize(f.spec.disk_bytes) })];
  const vram = (f.spec.gpus ?? []).map((g) => g.vram).filter((v) => v > 0);
  if (vram.length) facts.push(t('offer_vram', { vram: formatSize(Math.max(...vram)) }));
  const { uptime_7d: d7, uptime_30d: d30 } = f.reliability;
  facts.push(d30 === null || d30 === undefined ? t('offer_uptime_new') : t('offer_uptime', { d30: percent(d30), d7: percent(d7 ?? d30) }));
  if (f.distance_km !== null && f.distance_km !== undefined) facts.push(t('offer_distance', { distance: formatDistance(f.distance_km) }));
  return facts;
}
