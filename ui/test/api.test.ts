// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api } from '../src/api/client';
import { ApiError } from '../src/lib/http';
import { registerNavigate } from '../src/lib/navigation';
import { loadSession, useSession } from '../src/stores/session';
import { useSettings } from '../src/stores/settings';
import { REQUEST_TIMEOUT_MS } from '../src/constants';

const navigate = vi.fn();

function reply(body: unknown, status = 200) {
  return Promise.resolve(new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } }));
}

beforeEach(() => {
  localStorage.clear();
  navigate.mockReset();
  registerNavigate(navigate);
  useSettings.setState({ language: 'en', isPCMode: false });
  localStorage.setItem('token', 'ACCESS');
  localStorage.setItem('refresh_token', 'REFRESH');
  loadSession();
});

afterEach(() => {
  registerNavigate(null);
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('api client', () => {
  it('sends the bearer token, language and credentials; unwraps data', async () => {
    const fetchMock = vi.fn((_url: RequestInfo | URL, _init?: RequestInit) => reply({ code: 200, data: { ok: 1 }, msg: 'ok' }));
    vi.stubGlobal('fetch', fetchMock);
    useSettings.setState({ language: 'zh' });
    await expect(api.get('/api/x', { query: { a: 1, b: '', c: 'x y' } })).resolves.toEqual({ ok: 1 });
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/x?a=1&c=x%20y');
    expect(init!.credentials).toBe('include');
    const headers = init!.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer ACCESS');
    expect(headers['Accept-Language']).toBe('zh');
  });

  it('uses the refresh token for the refresh call', async () => {
    const fetchMock = vi.fn((_url: RequestInfo | URL, _init?: RequestInit) => reply({ code: 200, data: null, msg: '' }));
    vi.stubGlobal('fetch', fetchMock);
    await api.get('/api/iam/v1/refresh', { auth: 'refresh' });
    expect((fetchMock.mock.calls[0][1]!.headers as Record<string, string>).Authorization).toBe('Bearer REFRESH');
  });

  it('rejects other codes with the server message', async () => {
    vi.stubGlobal('fetch', vi.fn(() => reply({ code: 409, data: null, msg: 'Refused by rule' }, 409)));
    await expect(api.post('/api/x')).rejects.toMatchObject({ message: 'Refused by rule', code: 409 });
    vi.stubGlobal('fetch', vi.fn(() => reply({ code: 400, data: { field: 'email' }, msg: 'Email Format Invalid' }, 200)));
    await expect(api.post('/api/x')).rejects.toMatchObject({ message: 'Email Format Invalid', data: { field: 'email' } });
  });

  it('body code 401 clears the session and goes to sign-in', async () => {
    vi.stubGlobal('fetch', vi.fn(() => reply({ code: 401, data: null, msg: 'expired' }, 200)));
    await expect(api.get('/api/x')).rejects.toBeInstanceOf(ApiError);
    expect(localStorage.getItem('token')).toBeNull();
    expect(useSession.getState().token).toBe('');
    expect(navigate.mock.calls[0][0]).toMatch(/^\/auth\/signin/);
  });

  it('HTTP 401 in PC mode tells the host and shows the market', async () => {
    useSettings.setState({ isPCMode: true });
    const post = vi.spyOn(window.parent, 'postMessage').mockImplementation(() => {});
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(new Response('', { status: 401 }))));
    await expect(api.get('/api/x')).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(post).toHaveBeenCalled();
    expect(navigate).toHaveBeenCalledWith('/market', { replace: true });
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('times out after 30 s with the SPEC.md message', async () => {
    vi.useFakeTimers();
    vi.stubGlobal(
      'fetch',
      vi.fn((_u: RequestInfo | URL, init?: RequestInit) =>
        new Promise((_, reject) => init!.signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))),
      ),
    );
    const p = api.get('/api/slow');
    const check = expect(p).rejects.toMatchObject({ message: 'Request timeout! Please try again later', kind: 'timeout' });
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
    await check;
  });

  it('network errors give the SPEC.md message in the current language', async () => {
    vi.stubGlobal('fetch', vi.fn(() => Promise.reject(new TypeError('Failed to fetch'))));
    await expect(api.get('/api/x')).rejects.toMatchObject({ message: 'Network error! Please try again later' });
    useSettings.setState({ language: 'zh' });
    await expect(api.get('/api/x')).rejects.toMatchObject({ message: '网络错误！请稍后重试' });
  });

  it('offline goes to /500', async () => {
    const spy = vi.spyOn(navigator, 'onLine', 'get').mockReturnValue(false);
    vi.stubGlobal('fetch', vi.fn());
    await expect(api.get('/api/x')).rejects.toBeInstanceOf(ApiError);
    expect(navigate).toHaveBeenCalledWith('/500', undefined);
    spy.mockRestore();
  });
});

describe('notification stats poll', () => {
  it('sends the last ETag and keeps the stats it holds on a 304', async () => {
    const { fetchNotificationStats } = await import('../src/api/notifications');
    const stats = { total: 2, read: 1, unread: 1, recent: 1, pending_friend_requests_exists: false, member_records_unread: 0 };
    const fetchMock = vi.fn((_url: RequestInfo | URL, init?: RequestInit) => {
      const sent = (init!.headers as Record<string, string>)['If-None-Match'];
      if (sent === '"s2.1.1.0.0"') return Promise.resolve(new Response(null, { status: 304, headers: { ETag: sent } }));
      return Promise.resolve(
        new Response(JSON.stringify({ code: 200, data: stats, msg: 'success' }), {
          status: 200,
          headers: { 'Content-Type': 'application/json', ETag: '"s2.1.1.0.0"' },
        }),
      );
    });
    vi.stubGlobal('fetch', fetchMock);
    const first = await fetchNotificationStats();
    expect(first).toEqual(stats);
    expect((fetchMock.mock.calls[0][1]!.headers as Record<string, string>)['If-None-Match']).toBeUndefined();
    const second = await fetchNotificationStats();
    expect((fetchMock.mock.calls[1][1]!.headers as Record<string, string>)['If-None-Match']).toBe('"s2.1.1.0.0"');
    expect(second).toBe(first);
    expect(navigate).not.toHaveBeenCalled();
  });
});
