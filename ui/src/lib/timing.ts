// Duplicate-click guards of docs/product.md §9, polling and intervals.
import { useEffect } from 'react';
import { DEBOUNCE_MS, LONG_PRESS_MS, POLLING_DEFAULT_INTERVAL_MS, THROTTLE_MS } from '../constants';

/** Runs at most once per `ms` (leading edge): a second click within 1 s is ignored. */
export function throttle<A extends unknown[]>(fn: (...args: A) => void, ms: number = THROTTLE_MS) {
  let last = -Infinity;
  return (...args: A) => {
    const now = Date.now();
    if (now - last < ms) return;
    last = now;
    fn(...args);
  };
}

/** Runs once, `ms` after the last call. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number = DEBOUNCE_MS) {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const debounced = (...args: A) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn(...args);
    }, ms);
  };
  debounced.cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  return debounced;
}

/**
 * Pointer handlers that call `fn` once the pointer has been held for `ms` (1 s). Spread the result
 * onto an element: <button {...longPress(fn)}>.
 */
export function longPress(fn: () => void, ms: number = LONG_PRESS_MS) {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  return {
    onPointerDown: () => {
      cancel();
      timer = setTimeout(() => {
        timer = null;
        fn();
      }, ms);
    },
    onPointerUp: cancel,
    onPointerLeave: cancel,
    onPointerCancel: cancel,
  };
}

/** The stored polling helper: calls `fn` every `ms` (1000 by default) until stopped. */
export function poll(fn: () => void | Promise<void>, ms: number = POLLING_DEFAULT_INTERVAL_MS) {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const tick = async () => {
    if (stopped) return;
    try {
      await fn();
    } catch {
      // A failed poll waits for the next tick.
    }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, 0);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/** Calls `tick` every `ms` while the page is visible (live status). */
export function useInterval(tick: () => void, ms: number) {
  useEffect(() => {
    const id = window.setInterval(() => {
      if (document.visibilityState === 'visible') tick();
    }, ms);
    return () => window.clearInterval(id);
  }, [tick, ms]);
}
