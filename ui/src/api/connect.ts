// Connect (docs/api.md "Connect", docs/connect.md): what a person may open for an installation or a box,
// through the market. The response types are written by hand until the server's OpenAPI document
// has them (then src/api/types.ts names them from schema.d.ts and these go).
import { createSseParser, readEventStream, type SseEvent } from '../lib/sse';
import { ApiError } from '../lib/http';
import { currentSession } from '../stores/session';
import { useSettings } from '../stores/settings';
import { api, handleUnauthorized } from './client';
import type { GpuInfo } from './types';

const RMP = '/api/rmp/v1';
const EBS = '/api/ebs/v2';

export interface SshDoor {
  /** The `zmarket tunnel …` command that opens a local port to the box's or container's SSH. */
  tunnel: string;
  /** What to type once the tunnel runs, e.g. `ssh -p 2222 root@127.0.0.1`. */
  command: string;
}

interface TcpPort {
  port: number;
  name: string;
  /** The `zmarket tunnel …` command for this port. */
  tunnel?: string;
}

export interface AppConnect {
  device_online: boolean;
  /** `url`: the call that hands a one-time link; `origin`: the app's own origin. */
  web: { url: string; origin?: string } | null;
  terminal: boolean;
  logs: boolean;
  tcp: TcpPort[];
  api: { base_url: string } | null;
  ssh: SshDoor | null;
  ai: { endpoint: string; gpus: (GpuInfo | string)[] } | null;
  /** The app's protocol needs a native client (a remote desktop app with ports besides its web one). */
  native_client?: boolean;
}

interface DeviceConnect {
  device_online: boolean;
  ssh: SshDoor | null;
}

type LogStream = 'stdout' | 'stderr';

/** One line of `docker logs`; `ts` is the container runtime's time stamp (RFC 3339, or epoch ms). */
export interface LogLine {
  ts: string | number;
  stream: LogStream;
  text: string;
}

const app = (id: string) => `${RMP}/apps/${encodeURIComponent(id)}`;

export const fetchAppConnect = (id: string, signal?: AbortSignal) => api.get<AppConnect>(`${app(id)}/connect`, { signal });

/** A one-time address on the app's own origin (docs/api.md: `/open` with `Accept: application/json`). */
export const fetchAppOpenUrl = (id: string, signal?: AbortSignal) => api.get<{ url: string }>(`${app(id)}/open`, { signal });

export const fetchAppLogs = (id: string, tail: number, signal?: AbortSignal) =>
  api.get<{ lines: LogLine[] }>(`${app(id)}/logs`, { query: { tail }, signal });

export const fetchDeviceConnect = (id: string, signal?: AbortSignal) =>
  api.get<DeviceConnect>(`${EBS}/devices/${encodeURIComponent(id)}/connect`, { signal });

/** How a followed log stream ended: the server's sentence, or null when the connection broke. */
interface LogStreamEnd {
  reason: string | null;
}

/** The `line` and `end` events of the followed logs; anything else (or unreadable) is skipped. */
export function logStreamEvent(e: SseEvent): { line: LogLine } | { end: LogStreamEnd } | null {
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch {
    return null;
  }
  if (!data || typeof data !== 'object') return null;
  const d = data as Record<string, unknown>;
  if (e.event === 'line') {
    if (typeof d.text !== 'string') return null;
    const ts = typeof d.ts === 'string' || typeof d.ts === 'number' ? d.ts : '';
    return { line: { ts, stream: d.stream === 'stderr' ? 'stderr' : 'stdout', text: d.text } };
  }
  if (e.event === 'end') return { end: { reason: typeof d.reason === 'string' && d.reason ? d.reason : null } };
  return null;
}

/**
 * Follows an installation's logs (`?tail=&follow=1`, Server-Sent Events read with fetch so the token
 * goes in the Authorization header). Resolves when the stream ends: with the server's `end` reason,
 * or `reason: null` when the connection broke without one. Rejects with an ApiError when the server
 * refuses the stream (its localized message), never when `signal` aborts it (then it resolves).
 */
export async function followAppLogs(
  id: string,
  tail: number,
  onLines: (lines: LogLine[]) => void,
  signal: AbortSignal,
): Promise<LogStreamEnd> {
  const lang = useSettings.getState().language;
  const headers: Record<string, string> = { Accept: 'text/event-stream', 'Accept-Language': lang };
  const token = currentSession().token;
  if (token) headers.Authorization = `Bearer ${token}`;
  let end: LogStreamEnd | null = null;
  // Lines arrive in bursts (the tail at first): hand them over a chunk at a time, not one by one.
  let batch: LogLine[] = [];
  const parser = createSseParser((e) => {
    const ev = logStreamEvent(e);
    if (!ev) return;
    if ('line' in ev) batch.push(ev.line);
    else end = ev.end;
  });
  let res: Response;
  try {
    res = await fetch(`${app(id)}/logs?tail=${tail}&follow=1`, { headers, signal, cache: 'no-store', credentials: 'include' });
  } catch (err) {
    if (signal.aborted) return { reason: null };
    throw new ApiError(String(err), 'network', 0);
  }
  if (res.status === 401) {
    handleUnauthorized();
    throw new ApiError('unauthorized', 'unauthorized', 401);
  }
  if (!res.ok || !res.body) {
    let msg = `HTTP ${res.status}`;
    try {
      msg = ((await res.json()) as { msg?: string }).msg || msg;
    } catch {
      // Not an envelope: keep the status.
    }
    throw new ApiError(msg, 'http', res.status);
  }
  // Open: an app that printed nothing sends no line for a while, and the panel says so.
  onLines([]);
  try {
    await readEventStream(res.body, (chunk) => {
      parser.push(chunk);
      if (batch.length) {
        const lines = batch;
        batch = [];
        onLines(lines);
      }
      return end === null;
    });
  } catch {
    // A broken connection: reported as an end without a reason.
  }
  return end ?? { reason: null };
}
