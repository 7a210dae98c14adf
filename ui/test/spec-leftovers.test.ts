// @vitest-environment happy-dom
// SPEC.md §9's small constants, each through the code that uses it (issue 17, item 14): the service
// worker clean-up once per session, the stored polling helper's 1,000 ms default, the progress
// bar's 0.3 start and 500 ms steps, the 99+ badge, the 1 s throttle, 500 ms debounce and 1 s
// long-press guards. Also the context-switch landing rule (item 1).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearServiceWorkersOnce } from '../src/app/RouteEffects';
import { doneProgress, resetProgress, startProgress } from '../src/app/progress';
import { badgeText } from '../src/components/Badge';
import { BADGE_MAX, DEBOUNCE_MS, LONG_PRESS_MS, POLLING_DEFAULT_INTERVAL_MS, PROGRESS_MINIMUM, PROGRESS_SPEED_MS, SW_RELOAD_FLAG, THROTTLE_MS } from '../src/constants';
import { landingAfterSwitch } from '../src/lib/paths';
import { debounce, longPress, poll, throttle } from '../src/lib/timing';
import { useFeedback } from '../src/stores/feedback';

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  vi.useRealTimers();
  resetProgress();
});

describe('SPEC.md §9 constants', () => {
  it('have the values of the specification', () => {
    expect([POLLING_DEFAULT_INTERVAL_MS, PROGRESS_MINIMUM, PROGRESS_SPEED_MS, BADGE_MAX]).toEqual([1000, 0.3, 500, 99]);
    expect([THROTTLE_MS, DEBOUNCE_MS, LONG_PRESS_MS]).toEqual([1000, 500, 1000]);
  });

  it('the stored polling helper runs every 1,000 ms by default, until stopped', async () => {
    const f = vi.fn();
    const stop = poll(f);
    await vi.advanceTimersByTimeAsync(0);
    expect(f).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(f).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(f).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(3000);
    expect(f).toHaveBeenCalledTimes(5);
    stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(f).toHaveBeenCalledTimes(5);
  });

  it('the progress bar starts at 0.3 and moves every 500 ms, reference-counted', () => {
    startProgress();
    expect(useFeedback.getState().progress).toBe(0.3);
    vi.advanceTimersByTime(499);
    expect(useFeedback.getState().progress).toBe(0.3);
    vi.advanceTimersByTime(1);
    const first = useFeedback.getState().progress!;
    expect(first).toBeGreaterThan(0.3);
    startProgress();
    doneProgress();
    expect(useFeedback.getState().progress).not.toBeNull();
    vi.advanceTimersByTime(500);
    expect(useFeedback.getState().progress!).toBeGreaterThan(first);
    doneProgress();
    expect(useFeedback.getState().progress).toBeNull();
  });

  it('the badge shows 99+ above 99', () => {
    expect([badgeText(1), badgeText(99), badgeText(100), badgeText(5000)]).toEqual(['1', '99', '99+', '99+']);
  });

  it('a second click within 1 s is ignored; a debounced call runs 500 ms after the last', () => {
    const clicked = vi.fn();
    const click = throttle(clicked);
    click();
    vi.advanceTimersByTime(999);
    click();
    expect(clicked).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    click();
    expect(clicked).toHaveBeenCalledTimes(2);
    const typed = vi.fn();
    const type = debounce(typed);
    type();
    vi.advanceTimersByTime(400);
    type();
    vi.advanceTimersByTime(499);
    expect(typed).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(typed).toHaveBeenCalledTimes(1);
  });

  it('a long press fires after 1 s held, not when released earlier', () => {
    const fired = vi.fn();
    const handlers = longPress(fired);
    handlers.onPointerDown();
    vi.advanceTimersByTime(999);
    handlers.onPointerUp();
    vi.advanceTimersByTime(2000);
    expect(fired).not.toHaveBeenCalled();
    handlers.onPointerDown();
    vi.advanceTimersByTime(1000);
    expect(fired).toHaveBeenCalledTimes(1);
  });
});

describe('service worker clean-up', () => {
  beforeEach(() => {
    vi.useRealTimers();
    sessionStorage.clear();
  });

  it('unregisters workers, deletes caches and reloads once per session', async () => {
    const unregister = vi.fn(async () => true);
    const deleted: string[] = [];
    vi.stubGlobal('caches', { keys: async () => ['v1', 'v2'], delete: async (k: string) => deleted.push(k) > 0 });
    Object.defineProperty(navigator, 'serviceWorker', {
      configurable: true,
      value: { getRegistrations: async () => [{ unregister }] },
    });
    const reload = vi.fn();
    Object.defineProperty(window, 'location', { configurable: true, value: { ...window.location, reload } });
    expect(await clearServiceWorkersOnce()).toBe(true);
    expect(unregister).toHaveBeenCalledTimes(1);
    expect(deleted).toEqual(['v1', 'v2']);
    expect(reload).toHaveBeenCalledTimes(1);
    expect(sessionStorage.getItem(SW_RELOAD_FLAG)).toBe('1');
    // Not again in the same session.
    expect(await clearServiceWorkersOnce()).toBe(false);
    expect(reload).toHaveBeenCalledTimes(1);
    vi.unstubAllGlobals();
  });
});

describe('context switch landing (issue 17)', () => {
  const personal = [
    { path: '/app', meta: { isHide: false } },
    { path: '/devices', meta: { isHide: false }, children: [{ path: '/devices/details', meta: { isHide: true } }] },
    { path: '/account', meta: { isHide: false } },
  ];
  const member = [
    { path: '/app', meta: { isHide: false } },
    { path: '/account', meta: { isHide: false } },
  ];
  it('stays on a page the new menu allows, query and all', () => {
    expect(landingAfterSwitch('/account', member)).toBe('/account');
    expect(landingAfterSwitch('/devices/details?id=AB', personal)).toBe('/devices/details?id=AB');
  });
  it('else opens the new menu’s first visible entry', () => {
    expect(landingAfterSwitch('/devices', member)).toBe('/app');
    expect(landingAfterSwitch('/company', personal)).toBe('/app');
    expect(landingAfterSwitch('/company-email', [{ path: '/account', meta: { isHide: false } }])).toBe('/account');
    expect(landingAfterSwitch('/company', [{ path: '/x', meta: { isHide: true } }, { path: 'devices' }])).toBe('/devices');
    expect(landingAfterSwitch('/company', [])).toBe('/app');
  });
});
