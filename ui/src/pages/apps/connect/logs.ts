// The log panel's bookkeeping, kept apart from React so it can be tested line by line: the cap on
// what stays in memory, the search filter and its highlights, the local time stamps, the file.
import type { LogLine } from '../../../api/connect';

/** Lines asked for when the panel opens (and on every reconnect). */
export const LOG_TAIL = 200;
/** Lines kept in memory: the oldest go first. */
export const LOG_MAX_LINES = 5000;

/** A loaded line with its place in the panel (a stable React key). */
export interface ShownLine extends LogLine {
  n: number;
}

/** `lines` then `incoming`, numbered on from `nextN`, keeping only the newest `max`. */
export function appendCapped(lines: ShownLine[], incoming: LogLine[], nextN: number, max = LOG_MAX_LINES): ShownLine[] {
  if (!incoming.length) return lines;
  const added = incoming.map((l, i) => ({ ...l, n: nextN + i }));
  if (added.length >= max) return added.slice(added.length - max);
  const keep = Math.max(0, lines.length + added.length - max);
  return (keep ? lines.slice(keep) : lines).concat(added);
}

function tsValue(ts: string | number): number {
  if (typeof ts === 'number') return ts;
  const v = Date.parse(ts);
  return Number.isNaN(v) ? 0 : v;
}

/** -1, 0, 1: two time stamps compared (RFC 3339 strings of the same length compare as text, so
 * nanoseconds count; anything else by its milliseconds). */
function compareTs(a: string | number, b: string | number): number {
  if (typeof a === 'string' && typeof b === 'string' && a.length === b.length && a.length >= 20) return a < b ? -1 : a > b ? 1 : 0;
  const x = tsValue(a);
  const y = tsValue(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * After a reconnect the stream starts again with its tail, which overlaps what is already shown:
 * the lines up to and including the last shown time stamp are dropped, until the first newer one.
 * Returns the lines to add and whether the overlap is over (then every later line is new).
 */
export function dropOverlap(incoming: LogLine[], lastTs: string | number | null): { lines: LogLine[]; caughtUp: boolean } {
  if (lastTs === null || lastTs === '') return { lines: incoming, caughtUp: true };
  const first = incoming.findIndex((l) => compareTs(l.ts, lastTs) > 0);
  if (first < 0) return { lines: [], caughtUp: false };
  return { lines: incoming.slice(first), caughtUp: true };
}

/** The lines whose text contains `query` (case-insensitive); all of them for an empty query. */
export function filterLines<T extends LogLine>(lines: T[], query: string): T[] {
  const q = query.trim().toLowerCase();
  if (!q) return lines;
  return lines.filter((l) => l.text.toLowerCase().includes(q));
}

/** `text` cut into pieces, the ones matching `query` (case-insensitive) marked, for highlighting. */
export function splitMatches(text: string, query: string): { text: string; match: boolean }[] {
  const q = query.trim().toLowerCase();
  if (!q) return [{ text, match: false }];
  const lower = text.toLowerCase();
  const out: { text: string; match: boolean }[] = [];
  let at = 0;
  for (;;) {
    const i = lower.indexOf(q, at);
    if (i < 0) break;
    if (i > at) out.push({ text: text.slice(at, i), match: false });
    out.push({ text: text.slice(i, i + q.length), match: true });
    at = i + q.length;
  }
  if (at < text.length) out.push({ text: text.slice(at), match: false });
  return out;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function toDate(ts: string | number): Date | null {
  if (ts === '') return null;
  const d = new Date(typeof ts === 'number' ? ts : Date.parse(ts));
  return Number.isNaN(d.getTime()) ? null : d;
}

/** The time of a line in the reader's time zone, `HH:mm:ss` (the panel only renders in the browser). */
export function logTime(ts: string | number): string {
  const d = toDate(ts);
  return d ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` : '';
}

/** The full local date and time of a line, `YYYY-MM-DD HH:mm:ss.SSS`. */
export function logDateTime(ts: string | number): string {
  const d = toDate(ts);
  if (!d) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${logTime(ts)}.${pad(d.getMilliseconds(), 3)}`;
}

/** The text of the downloaded .log file: one line each, local time, the stream, the text. */
export function logFileText(lines: LogLine[]): string {
  return lines.map((l) => `${logDateTime(l.ts)} ${l.stream} ${l.text}\n`).join('');
}

/** A file name for the download: the app's name made safe, and the local time. */
export function logFileName(name: string, now = new Date()): string {
  const safe = name.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '') || 'app';
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `${safe}-${stamp}.log`;
}
