// The look of a Connect door (docs/connect.md), shared by the app details page's Connect section and
// the device details page's SSH block: a titled block, copyable command lines, the SSH door.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { fetchAppOpenUrl, type SshDoor } from '../../api/connect';
import { copyText } from '../../lib/clipboard';
import { useT } from '../../lib/i18n';
import { paths, usePublicPaths } from '../../lib/paths';
import { useAction } from '../../lib/useAction';
import { toast, toastError } from '../../stores/feedback';
import { Icon } from '../Icon';

/** One door: an icon, a title, an optional one-line hint, then its content. */
export function ConnectBlock({ kind, title, hint, wide, actions, children }: { kind: string; title: string; hint?: ReactNode; wide?: boolean; actions?: ReactNode; children: ReactNode }) {
  const id = `connect-${kind}`;
  return (
    <section className={`connect-block${wide ? ' wide' : ''}`} data-connect={kind} aria-labelledby={id}>
      <div className="connect-block-head">
        <h3 id={id}>{title}</h3>
        {actions ? <div className="connect-block-actions">{actions}</div> : null}
      </div>
      {hint ? <p className="connect-hint">{hint}</p> : null}
      {children}
    </section>
  );
}

/** A command or address in a code line with a Copy button ("Copied" for a moment after). */
export function CopyLine({ text, label }: { text: string; label?: string }) {
  const t = useT();
  const [copied, setCopied] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);
  const copy = async () => {
    if (await copyText(text)) {
      setCopied(true);
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(() => setCopied(false), 1500);
    } else toast('error', t('copy_failed'));
  };
  return (
    <div className="copy-line">
      {label ? <span className="copy-line-label">{label}</span> : null}
      <div className="copy-line-row">
        <code>{text}</code>
        <button type="button" className="button small ghost" onClick={() => void copy()} aria-label={`${t('copy')}: ${text}`}>
          <Icon name={copied ? 'check' : 'copy'} size={14} /> {copied ? t('copied') : t('copy')}
        </button>
      </div>
    </div>
  );
}

/** A link to the account page, where API keys are made (a computer's page: none on the phone pages). */
export function ApiKeysLink() {
  const t = useT();
  const { mobile } = usePublicPaths();
  if (mobile) return null;
  return (
    <Link className="inline-link" to={paths.console.account()}>
      <Icon name="link" size={14} /> {t('api_keys_link')}
    </Link>
  );
}

/** The SSH door: the tunnel to run, then the ssh command, with how to get there. */
export function SshBlock({ ssh, title }: { ssh: SshDoor; title?: string }) {
  const t = useT();
  return (
    <ConnectBlock kind="ssh" title={title ?? t('connect_ssh')} hint={t('ssh_hint')}>
      <CopyLine label={t('ssh_tunnel')} text={ssh.tunnel} />
      <CopyLine label={t('ssh_login')} text={ssh.command} />
      <ApiKeysLink />
    </ConnectBlock>
  );
}

/**
 * Opens an installation's web interface through the market (docs/connect.md): the one-time address
 * is fetched after the click, so the tab is opened at once, inside the click (a popup blocker lets
 * that through), and sent there when the address arrives. It gets no handle on this page (`opener`
 * cleared): the app's origin is the app's, not the market's.
 */
export function useOpenApp(id: string) {
  const opening = useAction({ onError: toastError });
  const [fallback, setFallback] = useState('');
  const open = () => {
    setFallback('');
    void opening.run(async () => {
      const tab = window.open('', '_blank');
      try {
        const { url: target } = await fetchAppOpenUrl(id);
        if (tab && !tab.closed) {
          try {
            tab.opener = null;
          } catch {
            // Some browsers make it read-only: the origins differ anyway.
          }
          tab.location.href = target;
        } else {
          // The tab was blocked or closed: offer the address to click instead.
          setFallback(target);
        }
      } catch (err) {
        tab?.close();
        throw err;
      }
    });
  };
  return { busy: opening.busy, error: opening.error, fallback, open };
}

/** The Open button of an installation (its header, the /app list). */
export function OpenAppButton({ id, className = 'button primary small' }: { id: string; className?: string }) {
  const t = useT();
  const { busy, fallback, open } = useOpenApp(id);
  return (
    <>
      <button type="button" className={className} onClick={open} disabled={busy}>
        {busy ? t('connect_opening') : t('open')}
      </button>
      {fallback ? (
        <a className="button ghost small" href={fallback} target="_blank" rel="noopener noreferrer">
          {t('open')} ↗
        </a>
      ) : null}
    </>
  );
}
