// @vitest-environment happy-dom
// The Connect section's blocks show exactly what the connect answer holds (API.md "Connect"), the
// offline line hides the doors that need the device, and Open opens its tab inside the click.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppConnect } from '../src/api/connect';
import { ConnectBlocks, curlExample, tunnelCommand } from '../src/pages/apps/connect/ConnectSection';
import { loadSession } from '../src/stores/session';
import { useSettings } from '../src/stores/settings';
import { click, envelope, settle, show, unmount, waitFor } from './connect-render';

const ID = 'i0190ab';

const full: AppConnect = {
  device_online: true,
  web: { url: 'http://i0190ab.localhost:8080/' },
  terminal: true,
  logs: true,
  tcp: [
    { port: 5432, name: 'postgres' },
    { port: 6379, name: '' },
  ],
  api: { base_url: 'http://127.0.0.1:8080/api/rmp/v1/apps/i0190ab/api' },
  ssh: { tunnel: 'zmarket tunnel --server http://127.0.0.1:8080 --key <YOUR_KEY> --app i0190ab --port 22 --local 127.0.0.1:2222', command: 'ssh -p 2222 root@127.0.0.1' },
  ai: { endpoint: 'http://127.0.0.1:8080/api/rmp/v1/apps/i0190ab/api/v1', gpus: [{ name: 'RTX 4090', vram: 0 } as never, 'A100'] },
};

const none: AppConnect = { device_online: true, web: null, terminal: false, logs: false, tcp: [], api: null, ssh: null, ai: null };

const kinds = (el: HTMLElement) => [...el.querySelectorAll('[data-connect]')].map((b) => b.getAttribute('data-connect'));
const block = (el: HTMLElement, kind: string) => el.querySelector(`[data-connect="${kind}"]`) as HTMLElement | null;

beforeEach(() => {
  localStorage.clear();
  localStorage.setItem('token', 'ACCESS');
  loadSession();
  useSettings.setState({ language: 'en', isPCMode: false });
  // The log panel starts its stream: keep it pending.
  vi.stubGlobal('fetch', vi.fn(() => new Promise<Response>(() => {})));
});

afterEach(async () => {
  await unmount();
  vi.unstubAllGlobals();
});

describe('Connect blocks', () => {
  it('show every door the answer holds, each with its commands', async () => {
    const el = await show(<ConnectBlocks id={ID} name="Grafana" c={full} />);
    expect(kinds(el)).toEqual(['web', 'ai', 'api', 'ssh', 'tcp', 'logs', 'terminal']);
    expect(block(el, 'web')!.textContent).toContain('http://i0190ab.localhost:8080/');
    expect(block(el, 'web')!.querySelector('button')!.textContent).toContain('Open');
    expect(block(el, 'ai')!.textContent).toContain(full.ai!.endpoint);
    expect(block(el, 'ai')!.textContent).toContain('RTX 4090, A100');
    const codes = (kind: string) => [...block(el, kind)!.querySelectorAll('code')].map((c) => c.textContent);
    expect(codes('api')).toEqual([full.api!.base_url, `curl -H "Authorization: Bearer zk_…" ${full.api!.base_url}`]);
    expect(codes('ssh')).toEqual([full.ssh!.tunnel, full.ssh!.command]);
    expect(codes('tcp')).toEqual([
      `zmarket tunnel --server ${window.location.origin} --key <YOUR_KEY> --app ${ID} --port 5432`,
      `zmarket tunnel --server ${window.location.origin} --key <YOUR_KEY> --app ${ID} --port 6379`,
    ]);
    expect(block(el, 'tcp')!.textContent).toContain('postgres · Port 5432');
    // SSH, TCP and API point to the account page for keys.
    for (const k of ['ssh', 'tcp', 'api']) expect(block(el, k)!.querySelector('a[href="/account"]'), k).not.toBeNull();
    expect(block(el, 'terminal')!.textContent).toContain('Open terminal');
    expect(block(el, 'logs')!.querySelector('[role="log"]')).not.toBeNull();
    expect(el.querySelector('[data-testid="connect-offline"]')).toBeNull();
  });

  it('show nothing that the answer does not hold', async () => {
    const el = await show(<ConnectBlocks id={ID} name="Grafana" c={none} />);
    expect(kinds(el)).toEqual([]);
    expect(el.textContent).toContain('Nothing to open for this app right now.');
    await unmount();
    const some = await show(<ConnectBlocks id={ID} name="Grafana" c={{ ...none, terminal: true, api: { base_url: 'http://x/api' } }} />);
    expect(kinds(some)).toEqual(['api', 'terminal']);
    expect(fetch).not.toHaveBeenCalled(); // no logs block: no stream
  });

  it('offline: one line says so, the doors that need the device are hidden', async () => {
    const el = await show(<ConnectBlocks id={ID} name="Grafana" c={{ ...full, device_online: false }} />);
    expect(el.querySelector('[data-testid="connect-offline"]')!.textContent).toContain('The device is offline');
    expect(kinds(el)).toEqual(['ai', 'api']);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('speak Chinese', async () => {
    const el = await show(<ConnectBlocks id={ID} name="Grafana" c={full} />, 'zh');
    expect(block(el, 'web')!.textContent).toContain('打开');
    expect(block(el, 'logs')!.textContent).toContain('日志');
    expect(block(el, 'terminal')!.textContent).toContain('打开终端');
    expect(block(el, 'ssh')!.textContent).toContain('复制');
    await unmount();
    const off = await show(<ConnectBlocks id={ID} name="Grafana" c={{ ...full, device_online: false }} />, 'zh');
    expect(off.textContent).toContain('设备已离线');
  });

  it('an app that needs a native client: the tunnels and "{product} client not installed, download now" (SPEC.md §8)', async () => {
    const c = { ...none, tcp: [{ port: 21116, name: 'tcp 21116' }], native_client: true };
    const el = await show(<ConnectBlocks id={ID} name="RustDesk Server" c={c} />);
    const note = el.querySelector('[data-testid="native-client"]')!;
    const link = note.querySelector('a')!;
    expect(link.textContent).toBe('ZMarket client not installed, download now');
    expect(link.getAttribute('href')).toBe('/m/download');
    expect(kinds(el)).toEqual(['tcp']);
    await unmount();
    const zh = await show(<ConnectBlocks id={ID} name="RustDesk Server" c={c} />, 'zh');
    expect(zh.querySelector('[data-testid="native-client"] a')!.textContent).toBe('ZMarket 客户端未安装，立即下载');
    await unmount();
    // Inside the client (PC mode) it is installed; a web app needs none.
    useSettings.setState({ isPCMode: true });
    expect((await show(<ConnectBlocks id={ID} name="RustDesk Server" c={c} />)).querySelector('[data-testid="native-client"]')).toBeNull();
    await unmount();
    useSettings.setState({ isPCMode: false });
    expect((await show(<ConnectBlocks id={ID} name="Grafana" c={full} />)).querySelector('[data-testid="native-client"]')).toBeNull();
  });

  it('the command helpers', () => {
    expect(tunnelCommand('https://m.example', 'a1', 22)).toBe('zmarket tunnel --server https://m.example --key <YOUR_KEY> --app a1 --port 22');
    expect(curlExample('https://m.example/api/rmp/v1/apps/a1/api')).toBe('curl -H "Authorization: Bearer zk_…" https://m.example/api/rmp/v1/apps/a1/api');
  });
});

describe('Open', () => {
  const fakeTab = () => ({ closed: false, opener: {} as unknown, location: { href: '' }, close: vi.fn() });

  it('opens the tab inside the click, then sends it to the one-time address', async () => {
    const tab = fakeTab();
    let answer: (r: Response) => void = () => {};
    const fetchMock = vi.fn((_url: RequestInfo | URL, _init?: RequestInit) => new Promise<Response>((r) => (answer = r)));
    vi.stubGlobal('fetch', fetchMock);
    const open = vi.spyOn(window, 'open').mockImplementation(() => tab as unknown as Window);
    const el = await show(<ConnectBlocks id={ID} name="Grafana" c={{ ...none, web: full.web }} />);
    await click(block(el, 'web')!.querySelector('button')!);
    // Synchronously, before any answer: a blank tab (a popup blocker allows it inside the click).
    expect(open).toHaveBeenCalledWith('', '_blank');
    expect(String(fetchMock.mock.calls[0][0])).toBe(`/api/rmp/v1/apps/${ID}/open`);
    expect((fetchMock.mock.calls[0][1]!.headers as Record<string, string>).Accept).toBe('application/json');
    const url = 'http://i0190ab.localhost:8080/_zmarket/enter?token=abc';
    answer(envelope({ url }));
    await waitFor(() => expect(tab.location.href).toBe(url));
    expect(tab.opener).toBeNull();
    expect(tab.close).not.toHaveBeenCalled();
  });

  it('closes the tab and shows the error when the device is offline', async () => {
    const tab = fakeTab();
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(envelope(null, 409, 'The device is offline'))));
    vi.spyOn(window, 'open').mockImplementation(() => tab as unknown as Window);
    const el = await show(<ConnectBlocks id={ID} name="Grafana" c={{ ...none, web: full.web }} />);
    await click(block(el, 'web')!.querySelector('button')!);
    await waitFor(() => expect(tab.close).toHaveBeenCalled());
    await settle();
    expect(block(el, 'web')!.querySelector('[role="alert"]')!.textContent).toBe('The device is offline');
    expect(tab.location.href).toBe('');
  });

  it('offers a link when the tab was blocked', async () => {
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(envelope({ url: 'http://a.localhost/_zmarket/enter?token=t' }))));
    vi.spyOn(window, 'open').mockImplementation(() => null);
    const el = await show(<ConnectBlocks id={ID} name="Grafana" c={{ ...none, web: full.web }} />);
    await click(block(el, 'web')!.querySelector('button')!);
    await waitFor(() => expect(block(el, 'web')!.querySelector('a[href="http://a.localhost/_zmarket/enter?token=t"]')).not.toBeNull());
  });
});
