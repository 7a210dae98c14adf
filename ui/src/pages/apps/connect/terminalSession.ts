// xterm.js on the terminal WebSocket. Loaded with import() by TerminalPanel when a person opens the
// terminal: xterm stays out of the first load and out of the server bundle (it needs a DOM). Its CSS
// is part of the main stylesheet (src/main.tsx).
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { copyText } from '../../../lib/clipboard';
import { resizeMessage, terminalShortcut } from './terminalProtocol';

export type TerminalState = { phase: 'connecting' } | { phase: 'connected' } | { phase: 'closed'; code: number; reason: string };

interface TerminalOptions {
  /** The socket's address for the terminal's size once it is laid out. */
  url: (cols: number, rows: number) => string;
  protocols: string[];
  onState: (s: TerminalState) => void;
}

export interface TerminalHandle {
  focus(): void;
  dispose(): void;
}

const THEME = {
  background: '#0a0d13',
  foreground: '#e6e9f2',
  cursor: '#e6e9f2',
  selectionBackground: '#486aed80',
};

export function startTerminal(el: HTMLElement, opts: TerminalOptions): TerminalHandle {
  const term = new Terminal({
    cursorBlink: true,
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    fontSize: 13,
    scrollback: 5000,
    theme: THEME,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(el);
  const fitNow = () => {
    try {
      fit.fit();
    } catch {
      // Not laid out (hidden): keep the size it has.
    }
  };
  fitNow();

  let disposed = false;
  let socket: WebSocket | null = null;
  const send = (data: string) => {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(data);
  };

  term.attachCustomKeyEventHandler((e) => {
    const shortcut = terminalShortcut(e);
    if (shortcut === 'copy') {
      // Also keeps the browser's Ctrl+Shift+C (developer tools) away while the terminal has focus.
      e.preventDefault();
      if (term.hasSelection()) void copyText(term.getSelection());
      return false;
    }
    // Paste: xterm leaves the key alone, the browser pastes into xterm's input, xterm sends it.
    if (shortcut === 'paste') return false;
    return true;
  });
  const inputs = [term.onData(send), term.onBinary(send), term.onResize(({ cols, rows }) => send(resizeMessage(cols, rows)))];

  let frame = 0;
  const observer =
    typeof ResizeObserver === 'undefined'
      ? null
      : new ResizeObserver(() => {
          if (frame) cancelAnimationFrame(frame);
          frame = requestAnimationFrame(() => {
            frame = 0;
            if (!disposed) fitNow();
          });
        });
  observer?.observe(el);

  opts.onState({ phase: 'connecting' });
  try {
    socket = new WebSocket(opts.url(term.cols, term.rows), opts.protocols);
  } catch (err) {
    // A token that cannot be a subprotocol, a refused address: report it as a closed socket.
    opts.onState({ phase: 'closed', code: 1006, reason: '' });
    void err;
  }
  if (socket) {
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => {
      if (disposed) return;
      opts.onState({ phase: 'connected' });
      // The page may have been resized while connecting.
      send(resizeMessage(term.cols, term.rows));
      term.focus();
    };
    socket.onmessage = (m) => {
      if (disposed) return;
      if (m.data instanceof ArrayBuffer) term.write(new Uint8Array(m.data));
      else if (typeof m.data === 'string') term.write(m.data);
    };
    socket.onclose = (e) => {
      if (disposed) return;
      term.options.cursorBlink = false;
      opts.onState({ phase: 'closed', code: e.code, reason: e.reason });
    };
  }

  return {
    focus: () => term.focus(),
    dispose() {
      disposed = true;
      if (frame) cancelAnimationFrame(frame);
      observer?.disconnect();
      for (const d of inputs) d.dispose();
      if (socket) {
        socket.onopen = socket.onmessage = socket.onclose = null;
        if (socket.readyState === WebSocket.CONNECTING || socket.readyState === WebSocket.OPEN) socket.close(1000);
      }
      term.dispose();
    },
  };
}
