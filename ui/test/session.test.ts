// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { needsRefresh, refreshIfNeeded } from '../src/api/refresh';
import { loadSession, readStoredSession, saveSession, useSession } from '../src/stores/session';
import { loadStoredSettings, resolveLanguage, useSettings } from '../src/stores/settings';
import { pcWebTarget } from '../src/pages/pcweb/PcWebPage';
import { openLoading, toast, useFeedback } from '../src/stores/feedback';
import { debounce, throttle } from '../src/lib/timing';
import { LOADING_FADE_MS, TOAST_DURATION_MS } from '../src/constants';

const now = () => Math.floor(Date.now() / 1000);

beforeEach(() => {
  localStorage.clear();
  document.cookie = 'zm_lang=; max-age=0; path=/';
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('token refresh', () => {
  it('refreshes when 3600 s or less remain', () => {
    const ms = 1_000_000_000_000;
    expect(needsRefresh(ms / 1000 + 3600, ms)).toBe(true);
    expect(needsRefresh(ms / 1000 + 3601, ms)).toBe(false);
    expect(needsRefresh(0, ms)).toBe(false);
  });

  it('one refresh at a time, then nothing while the stored tokens are fresh', async () => {
    saveSession({ token: 'OLD', refresh_token: 'R1', access_token_expire: now() + 100 });
    let held: Promise<unknown> = Promise.resolve();
    const locks = {
      request: (_name: string, cb: () => Promise<unknown>) => {
        const run = held.then(cb);
        held = run.catch(() => undefined);
        return run;
      },
    };
    vi.stubGlobal('navigator', Object.create(navigator, { locks: { value: locks } }));
    const fetchMock = vi.fn(async () => {
      return new Response(JSON.stringify({ code: 200, data: { access_token: 'NEW', refresh_token: 'R2', access_token_expire: now() + 7200 }, msg: '' }));
    });
    vi.stubGlobal('fetch', fetchMock);
    await Promise.all([refreshIfNeeded(), refreshIfNeeded()]);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(localStorage.getItem('token')).toBe('NEW');
    expect(useSession.getState().refresh_token).toBe('R2');
    // The lock holder re-reads storage: nothing more to do once the winner stored fresh tokens.
    await refreshIfNeeded();
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it('adopts tokens another tab stored while waiting for the lock', async () => {
    saveSession({ token: 'OLD', refresh_token: 'R1', access_token_expire: now() + 100 });
    const locks = {
      request: async (_name: string, cb: () => Promise<unknown>) => {
        localStorage.setItem('token', 'OTHER');
        localStorage.setItem('access_token_expire', String(now() + 7200));
        return cb();
      },
    };
    vi.stubGlobal('navigator', Object.create(navigator, { locks: { value: locks } }));
    const fetchMock = vi.fn();
    vi.stubGlobal('fetch', fetchMock);
    await refreshIfNeeded();
    expect(fetchMock).not.toHaveBeenCalled();
    expect(useSession.getState().token).toBe('OTHER');
  });

  it('stores the session under the SPEC.md keys', () => {
    saveSession({
      token: 'T',
      refresh_token: 'R',
      access_token_expire: 5,
      smeId: 'c1',
      userType: 'admin',
      userInfo: { name: 'A', avatar_url: '', email: 'a@b.co' },
      organizationList: [{ id: 'user', name: 'P', network_id: '', owner: '' }],
    });
    expect(localStorage.getItem('token')).toBe('T');
    expect(localStorage.getItem('smeId')).toBe('c1');
    expect(JSON.parse(localStorage.getItem('userInfo')!).email).toBe('a@b.co');
    expect(readStoredSession().userType).toBe('admin');
    localStorage.removeItem('smeId');
    expect(readStoredSession().smeId).toBe('user');
    loadSession();
    expect(useSession.getState().loaded).toBe(true);
  });
});

describe('language setting', () => {
  it('query, then stored, then browser', () => {
    expect(resolveLanguage('zh', 'en', 'en-US')).toBe('zh');
    expect(resolveLanguage(null, 'zh', 'en-US')).toBe('zh');
    expect(resolveLanguage(null, null, 'zh-TW')).toBe('zh');
    expect(resolveLanguage('fr', undefined, 'de')).toBe('en');
  });
  it('writes the zm_lang cookie whenever it changes', () => {
    loadStoredSettings('?language=zh', 'en-US');
    expect(useSettings.getState().language).toBe('zh');
    expect(document.cookie).toContain('zm_lang=zh');
    useSettings.getState().setLanguage('en');
    expect(document.cookie).toContain('zm_lang=en');
    expect(JSON.parse(localStorage.getItem('zm_settings')!).language).toBe('en');
  });
});

describe('pc-web', () => {
  it('goes to the redirect with language and params', () => {
    const q = new URLSearchParams({ redirect: '/devices', language: 'zh', params: JSON.stringify({ id: 'd1', n: 2 }) });
    expect(pcWebTarget(q)).toBe('/devices?id=d1&n=2&language=zh');
    expect(pcWebTarget(new URLSearchParams({ redirect: 'https://evil.example' }))).toBe('/market');
    expect(pcWebTarget(new URLSearchParams({ redirect: '/market?x=1', params: '{bad' }))).toBe('/market?x=1');
  });
});

describe('feedback', () => {
  it('toasts close after 3000 ms', () => {
    vi.useFakeTimers();
    toast('info', 'hello');
    expect(useFeedback.getState().toasts).toHaveLength(1);
    vi.advanceTimersByTime(TOAST_DURATION_MS);
    expect(useFeedback.getState().toasts).toHaveLength(0);
  });
  it('loading overlay is reference-counted and fades for 400 ms', () => {
    vi.useFakeTimers();
    const a = openLoading();
    const b = openLoading();
    a();
    a();
    expect(useFeedback.getState().loadingCount).toBe(1);
    b();
    expect(useFeedback.getState().loadingVisible).toBe(true);
    vi.advanceTimersByTime(LOADING_FADE_MS);
    expect(useFeedback.getState().loadingVisible).toBe(false);
  });
  it('throttle and debounce', () => {
    vi.useFakeTimers();
    const f = vi.fn();
    const t = throttle(f);
    t();
    t();
    vi.advanceTimersByTime(1000);
    t();
    expect(f).toHaveBeenCalledTimes(2);
    const g = vi.fn();
    const d = debounce(g);
    d();
    d();
    vi.advanceTimersByTime(499);
    expect(g).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(g).toHaveBeenCalledTimes(1);
  });
});
