// @vitest-environment happy-dom
// The terminal's WebSocket side: its address and subprotocols (the token), the resize message, the
// copy/paste keys, what a close says; and the session wiring xterm to the socket (xterm mocked:
// happy-dom has no canvas or layout).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeText, resizeMessage, terminalProtocols, terminalShortcut, terminalUrl } from '../src/pages/apps/connect/terminalProtocol';
import { translate } from '../src/i18n';
import type { TFunction } from '../src/lib/i18n';
import { TerminalPanel } from '../src/pages/apps/connect/TerminalPanel';
import { loadSession } from '../src/stores/session';
import { act } from 'react';
import { click, show, unmount, waitFor } from './connect-render';

const term = vi.hoisted(() => ({
  instances: [] as FakeTerminal[],
}));

interface FakeTerminal {
  cols: number;
  rows: number;
  written: (string | Uint8Array)[];
  data?: (d: string) => void;
  resize?: (s: { cols: number; rows: number }) => void;
  keys?: (e: KeyboardEvent) => boolean;
  disposed: boolean;
  selection: string;
}

vi.mock('@xterm/xterm', () => ({
  Terminal: class {
    cols = 80;
    rows = 24;
    written: (string | Uint8Array)[] = [];
    disposed = false;
    selection = '';
    options: Record<string, unknown> = {};
    constructor() {
      term.instances.push(this as unknown as FakeTerminal);
    }
    loadAddon() {}
    open() {}
    focus() {}
    write(d: string | Uint8Array) {
      this.written.push(d);
    }
    onData(f: (d: string) => void) {
      (this as unknown as FakeTerminal).data = f;
      return { dispose() {} };
    }
    onBinary() {
      return { dispose() {} };
    }
    onResize(f: (s: { cols: number; rows: number }) => void) {
      (this as unknown as FakeTerminal).resize = f;
      return { dispose() {} };
    }
    attachCustomKeyEventHandler(f: (e: KeyboardEvent) => boolean) {
      (this as unknown as FakeTerminal).keys = f;
    }
    hasSelection() {
      return this.selection !== '';
    }
    getSelection() {
      return this.selection;
    }
    dispose() {
      this.disposed = true;
    }
  },
}));
vi.mock('@xterm/addon-fit', () => ({
  FitAddon: class {
    fit() {}
  },
}));

class FakeSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  static last: FakeSocket | null = null;
  readyState = 0;
  binaryType = 'blob';
  sent: string[] = [];
  closedWith: number | null = null;
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {
    FakeSocket.last = this;
  }
  send(d: string) {
    this.sent.push(d);
  }
  close(code: number) {
    this.closedWith = code;
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
}

const t: TFunction = (key, params) => translate('en', key, params);

describe('terminal protocol', () => {
  it('resizes with {"resize":[cols,rows]}', () => {
    expect(resizeMessage(120, 40)).toBe('{"resize":[120,40]}');
    expect(JSON.parse(resizeMessage(80.7, 0))).toEqual({ resize: [80, 1] });
  });

  it('opens ws(s) on this host with the token in a subprotocol', () => {
    expect(terminalUrl({ protocol: 'http:', host: '127.0.0.1:8080' }, 'i 1', 80, 24)).toBe('ws://127.0.0.1:8080/api/rmp/v1/apps/i%201/terminal?cols=80&rows=24');
    expect(terminalUrl({ protocol: 'https:', host: 'm.example' }, 'a', 100, 30)).toBe('wss://m.example/api/rmp/v1/apps/a/terminal?cols=100&rows=30');
    expect(terminalProtocols('eyJ.abc.def')).toEqual(['zmarket', 'zmarket.bearer.eyJ.abc.def']);
    expect(terminalProtocols('')).toEqual(['zmarket']);
  });

  it('takes Ctrl+Shift+C and Ctrl+Shift+V, leaves Ctrl+C to the shell', () => {
    const k = (code: string, mods: Partial<KeyboardEvent> = {}) =>
      terminalShortcut({ type: 'keydown', ctrlKey: true, shiftKey: true, altKey: false, metaKey: false, code, key: code.slice(3).toLowerCase(), ...mods });
    expect(k('KeyC')).toBe('copy');
    expect(k('KeyV')).toBe('paste');
    expect(k('KeyC', { shiftKey: false })).toBeNull();
    expect(k('KeyV', { type: 'keyup' })).toBeNull();
    expect(k('KeyX')).toBeNull();
  });

  it('says why it closed: the server reason for its codes, ours otherwise', () => {
    expect(closeText(t, 1000, 'exited')).toBe('The shell has exited.');
    expect(closeText(t, 4409, 'The rental has ended')).toBe('The rental has ended');
    expect(closeText(t, 4403, '')).toBe('You may not open a terminal here.');
    expect(closeText(t, 4404, '')).toBe('This app was not found on its device.');
    expect(closeText(t, 4409, '')).toBe('The device is offline or the rental has ended.');
    expect(closeText(t, 1006, '')).toBe('The connection was lost.');
  });
});

describe('terminal session', () => {
  beforeEach(() => {
    term.instances.length = 0;
    vi.stubGlobal('WebSocket', FakeSocket);
  });
  afterEach(() => vi.unstubAllGlobals());

  it('carries keys as text, output bytes to xterm, resizes as JSON; reports its states', async () => {
    const { startTerminal } = await import('../src/pages/apps/connect/terminalSession');
    const states: unknown[] = [];
    const el = document.createElement('div');
    const handle = startTerminal(el, { url: (c, r) => `ws://h/t?cols=${c}&rows=${r}`, protocols: ['zmarket', 'zmarket.bearer.T'], onState: (s) => states.push(s) });
    const ws = FakeSocket.last!;
    const x = term.instances[0];
    expect(ws.url).toBe('ws://h/t?cols=80&rows=24');
    expect(ws.protocols).toEqual(['zmarket', 'zmarket.bearer.T']);
    expect(ws.binaryType).toBe('arraybuffer');
    expect(states).toEqual([{ phase: 'connecting' }]);
    ws.open();
    expect(states.at(-1)).toEqual({ phase: 'connected' });
    ws.sent.length = 0;
    x.data!('echo hi\r');
    x.resize!({ cols: 132, rows: 43 });
    expect(ws.sent).toEqual(['echo hi\r', '{"resize":[132,43]}']);
    const bytes = new TextEncoder().encode('hi\r\n');
    ws.onmessage!({ data: bytes.buffer });
    expect(x.written).toEqual([bytes]);
    ws.onclose!({ code: 4409, reason: 'The device is offline' });
    expect(states.at(-1)).toEqual({ phase: 'closed', code: 4409, reason: 'The device is offline' });
    handle.dispose();
    expect(x.disposed).toBe(true);
  });

  it('Ctrl+Shift+C copies the selection and is not sent; Ctrl+Shift+V is left to the browser paste', async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } });
    const { startTerminal } = await import('../src/pages/apps/connect/terminalSession');
    const handle = startTerminal(document.createElement('div'), { url: () => 'ws://h/t', protocols: [], onState: () => {} });
    const x = term.instances[0];
    x.selection = 'copied text';
    const down = (code: string) => new KeyboardEvent('keydown', { code, key: code.slice(3).toLowerCase(), ctrlKey: true, shiftKey: true, cancelable: true });
    const copy = down('KeyC');
    expect(x.keys!(copy)).toBe(false);
    expect(copy.defaultPrevented).toBe(true);
    await Promise.resolve();
    expect(writeText).toHaveBeenCalledWith('copied text');
    const paste = down('KeyV');
    expect(x.keys!(paste)).toBe(false);
    expect(paste.defaultPrevented).toBe(false);
    expect(x.keys!(new KeyboardEvent('keydown', { code: 'KeyC', key: 'c', ctrlKey: true }))).toBe(true);
    handle.dispose();
    expect(FakeSocket.last!.closedWith).toBe(1000);
  });
});

describe('terminal panel', () => {
  beforeEach(() => {
    term.instances.length = 0;
    FakeSocket.last = null;
    vi.stubGlobal('WebSocket', FakeSocket);
    localStorage.setItem('token', 'ACCESS');
    loadSession();
  });
  afterEach(async () => {
    await unmount();
    vi.unstubAllGlobals();
  });

  it('opens on demand: Connecting…, Connected, then the close reason with Reconnect', async () => {
    const el = await show(<TerminalPanel id="i1" />);
    expect(FakeSocket.last).toBeNull(); // nothing runs before the person asks
    await click([...el.querySelectorAll('button')].find((b) => b.textContent?.includes('Open terminal'))!);
    await waitFor(() => expect(el.querySelector('[data-testid="terminal-state"]')!.textContent).toBe('Connecting…'));
    const ws = FakeSocket.last!;
    expect(ws.url).toBe(`ws://${window.location.host}/api/rmp/v1/apps/i1/terminal?cols=80&rows=24`);
    expect(ws.protocols).toEqual(['zmarket', 'zmarket.bearer.ACCESS']);
    await act(async () => ws.open());
    expect(el.querySelector('[data-testid="terminal-state"]')!.textContent).toBe('Connected');
    await act(async () => ws.onclose!({ code: 4403, reason: '' }));
    expect(el.querySelector('[data-testid="terminal-end"]')!.textContent).toContain('You may not open a terminal here.');
    await click([...el.querySelectorAll('[data-testid="terminal-end"] button')][0]);
    await waitFor(() => expect(FakeSocket.last).not.toBe(ws));
    expect(el.querySelector('[data-testid="terminal-end"]')).toBeNull();
  });
});
