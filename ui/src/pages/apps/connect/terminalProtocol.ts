// The terminal's side of the WebSocket (docs/api.md "Connect"), without xterm: the address, the
// subprotocols that carry the token (a browser cannot set headers on a WebSocket), the resize
// message, the keys the page takes for copy and paste, and what a close means to a person.
import type { TFunction } from '../../../lib/i18n';

/** The subprotocol the server answers with. */
const TERMINAL_PROTOCOL = 'zmarket';

export function terminalProtocols(token: string): string[] {
  return token ? [TERMINAL_PROTOCOL, `${TERMINAL_PROTOCOL}.bearer.${token}`] : [TERMINAL_PROTOCOL];
}

/** `ws(s)://<this host>/api/rmp/v1/apps/{id}/terminal?cols=&rows=`. */
export function terminalUrl(loc: { protocol: string; host: string }, id: string, cols: number, rows: number): string {
  const scheme = loc.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${loc.host}/api/rmp/v1/apps/${encodeURIComponent(id)}/terminal?cols=${cols}&rows=${rows}`;
}

/** The text frame that resizes the terminal on the server: `{"resize":[cols,rows]}`. */
export function resizeMessage(cols: number, rows: number): string {
  return JSON.stringify({ resize: [Math.max(1, Math.floor(cols)), Math.max(1, Math.floor(rows))] });
}

type KeyLike = Pick<KeyboardEvent, 'type' | 'ctrlKey' | 'shiftKey' | 'altKey' | 'metaKey' | 'code' | 'key'>;

/**
 * Ctrl+Shift+C (copy the selection) and Ctrl+Shift+V (paste), as in desktop terminals; plain Ctrl+C
 * and Ctrl+V stay the shell's (interrupt, literal next). On a Mac ⌘C and ⌘V work by themselves.
 */
export function terminalShortcut(e: KeyLike): 'copy' | 'paste' | null {
  if (e.type !== 'keydown' || !e.ctrlKey || !e.shiftKey || e.altKey || e.metaKey) return null;
  const k = e.code || `Key${e.key.toUpperCase()}`;
  if (k === 'KeyC') return 'copy';
  if (k === 'KeyV') return 'paste';
  return null;
}

/** What a person reads when the socket closes: the server's reason for its own codes, else ours. */
export function closeText(t: TFunction, code: number, reason: string): string {
  if (code === 1000) return t('terminal_exited');
  if (code >= 4000) {
    if (reason.trim()) return reason.trim();
    if (code === 4403) return t('terminal_refused');
    if (code === 4404) return t('terminal_not_found');
    if (code === 4409) return t('terminal_unavailable');
  }
  return t('terminal_lost');
}
