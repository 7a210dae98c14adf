// Hourly token refresh (docs/product.md §4, §9), one refresh at a time across tabs.
import { TOKEN_REFRESH_CHECK_MS, TOKEN_REFRESH_THRESHOLD_S } from '../constants';
import { loadSession, readStoredSession, saveTokens } from '../stores/session';
import { storageGet, storageSet } from '../lib/storage';
import { refreshTokens } from './iam';

const REFRESH_LOCK_NAME = 'zm-token-refresh';
const FALLBACK_LOCK_KEY = 'zm_refresh_lock';
/** A fallback lease older than this is considered abandoned (a tab closed mid-refresh). */
const FALLBACK_LEASE_MS = 35_000;

export function needsRefresh(expireEpochS: number, nowMs: number = Date.now()): boolean {
  if (!expireEpochS) return false;
  return expireEpochS - Math.floor(nowMs / 1000) <= TOKEN_REFRESH_THRESHOLD_S;
}

interface LockManagerLike {
  request<T>(name: string, cb: () => Promise<T>): Promise<T>;
}

function lockManager(): LockManagerLike | null {
  const locks = typeof navigator !== 'undefined' ? (navigator as { locks?: LockManagerLike }).locks : undefined;
  return locks && typeof locks.request === 'function' ? locks : null;
}

/**
 * Best-effort cross-tab lease in localStorage for browsers without Web Locks: write our id, then read
 * it back; if another tab holds a fresh lease, skip (that tab stores the new tokens, which we pick up
 * through the storage event).
 */
async function withFallbackLock<T>(work: () => Promise<T>): Promise<T | null> {
  const id = Math.random().toString(36).slice(2);
  const now = Date.now();
  const held = storageGet(FALLBACK_LOCK_KEY);
  if (held) {
    const [, at] = held.split(':');
    if (now - Number(at) < FALLBACK_LEASE_MS) return null;
  }
  storageSet(FALLBACK_LOCK_KEY, `${id}:${now}`);
  if (storageGet(FALLBACK_LOCK_KEY) !== `${id}:${now}`) return null;
  try {
    return await work();
  } finally {
    if (storageGet(FALLBACK_LOCK_KEY) === `${id}:${now}`) storageSet(FALLBACK_LOCK_KEY, null);
  }
}

let inFlight: Promise<void> | null = null;

/** The critical section: re-read storage, since the tab that won the race may have refreshed already. */
async function refreshLocked(): Promise<void> {
  const stored = readStoredSession();
  if (!stored.token || !stored.refresh_token) return;
  if (!needsRefresh(stored.access_token_expire)) {
    loadSession();
    return;
  }
  const data = await refreshTokens();
  saveTokens(data.access_token, data.refresh_token, data.access_token_expire);
}

/** Refreshes when 3600 s or less remain. Concurrent calls in a tab share one run. */
export function refreshIfNeeded(): Promise<void> {
  const s = readStoredSession();
  if (!s.token || !needsRefresh(s.access_token_expire)) return Promise.resolve();
  if (inFlight) return inFlight;
  const locks = lockManager();
  const run = locks ? locks.request(REFRESH_LOCK_NAME, refreshLocked) : withFallbackLock(refreshLocked).then(() => undefined);
  inFlight = run.catch(() => undefined).finally(() => {
    inFlight = null;
  });
  return inFlight;
}

/** Starts the hourly check (and checks once now). Returns a stop function. */
export function startTokenRefresh(): () => void {
  void refreshIfNeeded();
  const timer = setInterval(() => void refreshIfNeeded(), TOKEN_REFRESH_CHECK_MS);
  return () => clearInterval(timer);
}
