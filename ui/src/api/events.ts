// This tab's one connection to GET /api/cim/v1/events (docs/social.md "Live events"). It reads the
// Server-Sent Events with fetch (so the token goes in the Authorization header, never a URL),
// resumes with Last-Event-ID after every break, and while the stream is unavailable (refused, cut,
// the browser offline) polls the counts and tells the pages to reload until it is back.
// Loaded lazily by app/useLiveEvents.ts: it is not part of the first load.
import { LIVE_POLL_MS, LIVE_RETRY_MAX_MS, LIVE_RETRY_MS } from '../constants';
import { createSseParser, type SseEvent } from '../lib/sse';
import { emitLiveEvent, useLive, type LiveEvent, type LiveStatus } from '../stores/live';
import { useNotifications } from '../stores/notifications';
import { currentSession } from '../stores/session';
import { useSettings } from '../stores/settings';
import { handleUnauthorized } from './client';
import { fetchNotificationStats } from './notifications';
import { fetchSocialStats } from './social';

const EVENTS_PATH = '/api/cim/v1/events';
const STREAM_EVENTS = new Set(['message', 'friend_request', 'friend', 'read', 'notification']);

let running = false;
let controller: AbortController | null = null;
let lastEventId = '';
let failures = 0;
let retryTimer: ReturnType<typeof setTimeout> | null = null;
let pollTimer: ReturnType<typeof setInterval> | null = null;

/** The status, also on <html data-live> (end-to-end tests wait for the stream with it). */
function setStatus(status: LiveStatus) {
  useLive.setState({ status });
  if (typeof document !== 'undefined') document.documentElement.dataset.live = status;
}

const online = () => typeof navigator === 'undefined' || navigator.onLine !== false;

/** One refresh at a time; a request for another while one runs makes it run once more after. */
function coalesced(load: () => Promise<void>) {
  let inFlight: Promise<void> | null = null;
  let again = false;
  const run = (): Promise<void> => {
    if (inFlight) {
      again = true;
      return inFlight;
    }
    inFlight = load()
      .catch(() => undefined)
      .finally(() => {
        inFlight = null;
        if (again) {
          again = false;
          void run();
        }
      });
    return inFlight;
  };
  return run;
}

export const refreshSocialCounts = coalesced(async () => {
  const counts = await fetchSocialStats();
  if (running) useLive.setState({ counts });
});

const refreshBell = coalesced(async () => {
  const stats = await fetchNotificationStats();
  useNotifications.setState({ stats });
});

function apply(e: SseEvent) {
  lastEventId = e.lastEventId;
  if (e.event === 'ready' || e.event === 'resync') {
    failures = 0;
    stopPolling();
    setStatus('live');
    void refreshSocialCounts();
    let resumed = false;
    try {
      resumed = e.event === 'ready' && Boolean((JSON.parse(e.data) as { resumed?: boolean }).resumed);
    } catch {
      resumed = false;
    }
    // A fresh start or a gap in the log: what the pages show may be behind.
    if (!resumed) {
      void refreshBell();
      emitLiveEvent({ kind: 'reload' });
    }
    return;
  }
  if (!STREAM_EVENTS.has(e.event)) return;
  let data: unknown = null;
  try {
    data = JSON.parse(e.data);
  } catch {
    return;
  }
  if (e.event === 'notification') void refreshBell();
  else void refreshSocialCounts();
  emitLiveEvent({ kind: e.event, data } as LiveEvent);
}

async function connect() {
  if (!running) return;
  const token = currentSession().token;
  if (!token) return stopLive();
  controller = new AbortController();
  const { signal } = controller;
  if (useLive.getState().status !== 'polling') setStatus('connecting');
  const headers: Record<string, string> = {
    Accept: 'text/event-stream',
    Authorization: `Bearer ${token}`,
    'Accept-Language': useSettings.getState().language,
  };
  if (lastEventId) headers['Last-Event-ID'] = lastEventId;
  const parser = createSseParser(apply, lastEventId);
  try {
    const res = await fetch(EVENTS_PATH, { headers, signal, cache: 'no-store', credentials: 'include' });
    if (res.status === 401) {
      stopLive();
      handleUnauthorized();
      return;
    }
    if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    // The server ends every stream after a while: come back where it left off.
    if (signal.aborted || !running) return;
    scheduleReconnect(parser.retry ?? LIVE_RETRY_MS);
  } catch {
    if (signal.aborted || !running) return;
    failures += 1;
    startPolling();
    scheduleReconnect(Math.min(LIVE_RETRY_MS * 2 ** (failures - 1), LIVE_RETRY_MAX_MS));
  }
}

function scheduleReconnect(ms: number) {
  if (retryTimer) clearTimeout(retryTimer);
  retryTimer = setTimeout(() => {
    retryTimer = null;
    // Offline: wait for the browser's `online` event instead of failing again.
    if (online()) void connect();
  }, ms);
}

function startPolling() {
  setStatus('polling');
  if (pollTimer) return;
  pollTimer = setInterval(() => {
    if (!online()) return;
    void refreshSocialCounts();
    emitLiveEvent({ kind: 'reload' });
  }, LIVE_POLL_MS);
}

function stopPolling() {
  if (pollTimer) clearInterval(pollTimer);
  pollTimer = null;
}

function dropStream() {
  controller?.abort();
  controller = null;
  if (retryTimer) clearTimeout(retryTimer);
  retryTimer = null;
}

const onOffline = () => {
  if (!running) return;
  // A stream may not notice the cut for a long time: drop it and resume from the last id later.
  dropStream();
  startPolling();
};

const onOnline = () => {
  if (!running) return;
  dropStream();
  void connect();
};

/** Opens this tab's stream (once: a second call while it runs does nothing). */
export function startLive() {
  if (running) return;
  running = true;
  failures = 0;
  window.addEventListener('offline', onOffline);
  window.addEventListener('online', onOnline);
  if (online()) void connect();
  else startPolling();
}

/** Closes the stream and forgets where it was (the next person starts afresh). */
export function stopLive() {
  if (!running) return;
  running = false;
  window.removeEventListener('offline', onOffline);
  window.removeEventListener('online', onOnline);
  dropStream();
  stopPolling();
  lastEventId = '';
  setStatus('off');
  useLive.setState({ counts: null });
}
