// Deterministic formatters: the same output in QuickJS (no Intl) and in every browser, so server markup
// and the hydrated tree agree. Never use Intl, toLocaleString or local-time Date getters here.
import { COIN_DECIMALS, EARTH_RADIUS_KM, SIZE_DECIMALS, SIZE_STEP, SIZE_UNITS } from '../constants';

/** Groups the integer part with commas: 1234567.5 -> "1,234,567.5". */
function groupThousands(intDigits: string): string {
  let out = '';
  for (let i = 0; i < intDigits.length; i++) {
    if (i > 0 && (intDigits.length - i) % 3 === 0) out += ',';
    out += intDigits[i];
  }
  return out;
}

/** Rounds half away from zero to `decimals` places and prints exactly that many decimals. */
function toFixedRounded(value: number, decimals: number): string {
  const factor = Math.pow(10, decimals);
  const rounded = Math.round(Math.abs(value) * factor + 1e-9) / factor;
  const text = rounded.toFixed(decimals);
  return value < 0 && rounded !== 0 ? '-' + text : text;
}

/** 1234567 -> "1,234,567"; with decimals: formatNumber(1234.5, 2) -> "1,234.50". */
export function formatNumber(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return '-';
  const text = toFixedRounded(value, decimals);
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const dot = body.indexOf('.');
  const intPart = dot === -1 ? body : body.slice(0, dot);
  const frac = dot === -1 ? '' : body.slice(dot);
  return (negative ? '-' : '') + groupThousands(intPart) + frac;
}

/** Bytes in steps of 1024 to KB, MB, GB, TB with 2 decimals: 1536 -> "1.50 KB"; below 1 KB: "512 B". */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '-';
  let value = bytes;
  let unit = 0;
  while (value >= SIZE_STEP && unit < SIZE_UNITS.length - 1) {
    value /= SIZE_STEP;
    unit++;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  return `${toFixedRounded(value, SIZE_DECIMALS)} ${SIZE_UNITS[unit]}`;
}

/** Whole gibibytes for the resource description: 17179869184 -> "16"; 1.5 GiB -> "1.5". */
export function bytesToGbText(bytes: number): string {
  const gb = bytes / (SIZE_STEP * SIZE_STEP * SIZE_STEP);
  const text = toFixedRounded(gb, SIZE_DECIMALS);
  return text.replace(/\.?0+$/, '');
}

/** Money is an integer count of the smallest coin unit: 123456 -> "1,234.56". */
export function formatCoins(minorUnits: number): string {
  if (!Number.isFinite(minorUnits)) return '-';
  const whole = Math.round(minorUnits);
  const negative = whole < 0;
  const abs = Math.abs(whole);
  const factor = Math.pow(10, COIN_DECIMALS);
  const intPart = Math.floor(abs / factor);
  const frac = String(abs % factor);
  const padded = COIN_DECIMALS > 0 ? '.' + '0'.repeat(COIN_DECIMALS - frac.length) + frac : '';
  return (negative ? '-' : '') + groupThousands(String(intPart)) + padded;
}

/** Cents of a typed amount of coins ("12.50"), or null when it is not a positive amount. */
export function parseCoins(typed: string): number | null {
  const m = /^(\d{1,9})(?:[.,](\d{1,2}))?$/.exec(typed.trim());
  if (!m) return null;
  const cents = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return cents > 0 ? cents : null;
}

/** Great-circle distance in kilometres, rounded up to a whole kilometre. */
export function distanceKm(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h =
    Math.sin(dLat / 2) * Math.sin(dLat / 2) +
    Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) * Math.sin(dLng / 2);
  const km = 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
  return Math.max(0, Math.ceil(km - 1e-9));
}

/** A distance already in km (possibly fractional): whole km, rounded up, with separators: "1,235 km". */
export function formatDistance(km: number): string {
  if (!Number.isFinite(km) || km < 0) return '-';
  return `${formatNumber(Math.max(0, Math.ceil(km - 1e-9)))} km`;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|z|[+-]\d{2}:?\d{2})?$/;

/** Milliseconds since the epoch from RFC 3339 text, epoch seconds (number) or epoch milliseconds (>1e12). */
export function toEpochMs(value: string | number | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    return value > 1e12 ? value : value * 1000;
  }
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return toEpochMs(Number(trimmed));
  const m = RFC3339.exec(trimmed);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', tz = 'Z'] = m;
  const ms = frac ? Math.floor(Number(('0.' + frac).slice(0, 5)) * 1000 + 1e-6) : 0;
  let epoch = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (tz !== 'Z' && tz !== 'z') {
    const sign = tz[0] === '-' ? -1 : 1;
    const digits = tz.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4));
    epoch -= sign * offsetMin * 60_000;
  }
  return Number.isFinite(epoch) ? epoch : null;
}

const pad2 = (n: number) => (n < 10 ? '0' + n : String(n));

/** "2024-05-01 08:30" (UTC). With seconds: "2024-05-01 08:30:05". Invalid input gives "-". */
export function formatDateTime(value: string | number | null | undefined, withSeconds = false): string {
  const ms = toEpochMs(value);
  if (ms === null) return '-';
  const d = new Date(ms);
  const base = `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
  return withSeconds ? `${base}:${pad2(d.getUTCSeconds())}` : base;
}

/** "2024-05-01" (UTC). */
export function formatDate(value: string | number | null | undefined): string {
  const ms = toEpochMs(value);
  if (ms === null) return '-';
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

interface GpuEntry {
  name: string;
  passthrough: boolean;
  vram: number;
}

/** docs/product.md §3: a GPU given as a byte count, a name, or a list of entries. */
type GpuSpec = number | string | GpuEntry[] | null | undefined;

export function gpuCount(gpu: GpuSpec): number {
  if (Array.isArray(gpu)) return gpu.length;
  if (typeof gpu === 'number') return gpu > 0 ? 1 : 0;
  if (typeof gpu === 'string') return gpu.trim() ? 1 : 0;
  return 0;
}

interface ResourceSpec {
  cpu_cores: number;
  memory_bytes: number;
  disk_bytes: number;
  /** Either a count (app requirements) or the GPU forms of docs/product.md §3. */
  gpu_count?: number;
  gpus?: GpuSpec;
}

export interface ResourceWords {
  /** For one core. */
  core: string;
  cores: string;
  memory: string;
  disk: string;
  noGpu: string;
}

const RESOURCE_WORDS_EN: ResourceWords = {
  core: 'Core CPU',
  cores: 'Cores CPU',
  memory: 'GB Memory',
  disk: 'GB SSD Disk',
  noGpu: 'No GPU',
};

/** '8 Cores CPU, 16 GB Memory, 512 GB SSD Disk, GPU*1' or '…, No GPU' (docs/product.md §9). */
export function describeResources(spec: ResourceSpec, words: ResourceWords = RESOURCE_WORDS_EN): string {
  const count = typeof spec.gpu_count === 'number' ? spec.gpu_count : gpuCount(spec.gpus);
  const gpu = count > 0 ? `GPU*${count}` : words.noGpu;
  return `${spec.cpu_cores} ${spec.cpu_cores === 1 ? words.core : words.cores}, ${bytesToGbText(spec.memory_bytes)} ${words.memory}, ${bytesToGbText(spec.disk_bytes)} ${words.disk}, ${gpu}`;
}
