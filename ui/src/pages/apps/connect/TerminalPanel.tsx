// The Terminal block: a shell in the app's container (docker exec with a TTY) in xterm.js. Nothing
// runs until the person opens it; xterm is then loaded on demand (terminalSession.ts), never on
// the server and never in the first load.
import { useEffect, useRef, useState } from 'react';
import { useT } from '../../../lib/i18n';
import { currentSession } from '../../../stores/session';
import { ConnectBlock } from '../../../components/apps/connect';
import { Icon } from '../../../components/Icon';
import { closeText, terminalProtocols, terminalUrl } from './terminalProtocol';
import type { TerminalHandle, TerminalState } from './terminalSession';

type Phase = 'idle' | 'loading' | 'connecting' | 'connected' | 'closed';

export function TerminalPanel({ id }: { id: string }) {
  const t = useT();
  const [phase, setPhase] = useState<Phase>('idle');
  const [closed, setClosed] = useState<{ code: number; reason: string } | null>(null);
  const [generation, setGeneration] = useState(0);
  const host = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (generation === 0) return;
    const el = host.current;
    if (!el) return;
    let handle: TerminalHandle | null = null;
    let cancelled = false;
    setPhase('loading');
    setClosed(null);
    import('./terminalSession')
      .then(({ startTerminal }) => {
        if (cancelled) return;
        el.replaceChildren();
        handle = startTerminal(el, {
          url: (cols, rows) => terminalUrl(window.location, id, cols, rows),
          protocols: terminalProtocols(currentSession().token),
          onState: (s: TerminalState) => {
            if (cancelled) return;
            setPhase(s.phase);
            if (s.phase === 'closed') setClosed({ code: s.code, reason: s.reason });
          },
        });
      })
      .catch(() => {
        // The chunk did not load (a new release replaced it, the network dropped).
        if (cancelled) return;
        setPhase('closed');
        setClosed({ code: 1006, reason: '' });
      });
    return () => {
      cancelled = true;
      handle?.dispose();
    };
  }, [id, generation]);

  const start = () => setGeneration((g) => g + 1);
  const status =
    phase === 'loading'
      ? t('terminal_loading')
      : phase === 'connecting'
        ? t('terminal_connecting')
        : phase === 'connected'
          ? t('terminal_connected')
          : phase === 'closed'
            ? t('terminal_closed')
            : '';

  return (
    <ConnectBlock
      kind="terminal"
      title={t('connect_terminal')}
      hint={t('terminal_hint')}
      wide
      actions={
        phase !== 'idle' ? (
          <span className={`connect-state ${phase}`} data-testid="terminal-state" data-phase={phase}>
            <span className="connect-dot" aria-hidden="true" />
            {status}
          </span>
        ) : null
      }
    >
      {phase === 'idle' ? (
        <button type="button" className="button primary" onClick={start}>
          <Icon name="terminal" size={16} /> {t('terminal_open')}
        </button>
      ) : null}
      <div className="terminal-host" ref={host} hidden={generation === 0} data-testid="terminal" />
      {phase === 'closed' && closed ? (
        <div className="connect-status ended" role="status" data-testid="terminal-end">
          <span>{closeText(t, closed.code, closed.reason)}</span>
          <button type="button" className="button small primary" onClick={start}>
            {t('reconnect')}
          </button>
        </div>
      ) : null}
      {phase !== 'idle' ? <p className="connect-hint">{t('terminal_keys')}</p> : null}
    </ConnectBlock>
  );
}
