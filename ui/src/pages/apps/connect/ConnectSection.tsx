// The app details page's Connect section (docs/product.md §2's resource page blocks, docs/connect.md): the
// doors `GET /apps/{id}/connect` says the caller may open, each through the market. A block shows
// only when its field is there; while the device is offline one line says so and the doors that
// need the device are hidden (the API and AI references stay: they are addresses to keep).
import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import { fetchAppConnect, type AppConnect } from '../../../api/connect';
import type { InstallationDetails } from '../../../api/types';
import { useT } from '../../../lib/i18n';
import { useAsync } from '../../../lib/useAsync';
import { ApiKeysLink, ConnectBlock, CopyLine, SshBlock, useOpenApp } from '../../../components/apps/connect';
import { Icon } from '../../../components/Icon';
import { ErrorNote, SkeletonLines } from '../../../components/placeholders';
import { Section } from '../../../components/sections';
import { paths } from '../../../lib/paths';
import { useBoot } from '../../../stores/boot';
import { useSettings } from '../../../stores/settings';
import { LogPanel } from './LogPanel';
import { TerminalPanel } from './TerminalPanel';

/** The placeholder for the person's API key in the commands shown. */
const KEY_PLACEHOLDER = '<YOUR_KEY>';

function marketOrigin(): string {
  return typeof window === 'undefined' ? '' : window.location.origin;
}

export function tunnelCommand(origin: string, id: string, port: number): string {
  return `zmarket tunnel --server ${origin} --key ${KEY_PLACEHOLDER} --app ${id} --port ${port}`;
}

export function curlExample(baseUrl: string): string {
  return `curl -H "Authorization: Bearer zk_…" ${baseUrl}`;
}

/** Web: the app's own origin, opened through the market. */
function WebBlock({ id, origin }: { id: string; origin: string }) {
  const t = useT();
  const { busy, error, fallback, open } = useOpenApp(id);
  return (
    <ConnectBlock kind="web" title={t('connect_web')} hint={t('connect_web_hint')}>
      <p className="connect-address mono">{origin}</p>
      <div className="button-row">
        <button type="button" className="button primary" onClick={open} disabled={busy}>
          <Icon name="external" size={16} /> {busy ? t('connect_opening') : t('open')}
        </button>
        {fallback ? (
          <a className="button ghost" href={fallback} target="_blank" rel="noopener noreferrer">
            {t('open')} ↗
          </a>
        ) : null}
      </div>
      {error ? <p className="field-error" role="alert">{error}</p> : null}
    </ConnectBlock>
  );
}

/**
 * An app whose protocol needs a native client (docs/product.md §8; Sunshine, RustDesk): its ports are
 * reached through the tunnel commands below with the product's client, whose downloads the
 * operator offers (the download page). Inside the client (PC mode) it is there already.
 */
function NativeClientNote() {
  const t = useT();
  const boot = useBoot();
  const pcMode = useSettings((s) => s.isPCMode);
  if (pcMode) return null;
  return (
    <div className="connect-client" role="note" data-testid="native-client">
      <Icon name="download" size={18} />
      <div>
        <Link to={paths.download()}>{t('native_client_missing', { product: boot.productName })}</Link>
        <p className="muted small">{t('native_client_hint')}</p>
      </div>
    </div>
  );
}

function gpuNames(gpus: NonNullable<AppConnect['ai']>['gpus']): string {
  return gpus.map((g) => (typeof g === 'string' ? g : g.name)).join(', ');
}

/** The blocks of one connect answer (`id` and `name` are the installation's). */
export function ConnectBlocks({ id, name, c }: { id: string; name: string; c: AppConnect }) {
  const t = useT();
  const online = c.device_online;
  const tcp = online ? (c.tcp ?? []) : [];
  const any = online && (c.web || c.ssh || tcp.length || c.logs || c.terminal);
  return (
    <>
      {!online ? (
        <div className="connect-offline" role="status" data-testid="connect-offline">
          <Icon name="warning" size={18} />
          <div>
            <strong>{t('connect_offline')}</strong>
            <p className="muted small">{t('connect_offline_hint')}</p>
          </div>
        </div>
      ) : null}
      {c.native_client ? <NativeClientNote /> : null}
      {!any && !c.api && !c.ai && online ? <p className="muted">{t('connect_none')}</p> : null}
      <div className="connect-grid">
        {online && c.web ? <WebBlock id={id} origin={c.web.origin ?? c.web.url} /> : null}
        {c.ai ? (
          <ConnectBlock kind="ai" title={t('connect_ai')}>
            <dl className="facts">
              <div>
                <dt>{t('endpoint')}</dt>
                <dd className="mono">{c.ai.endpoint}</dd>
              </div>
              <div>
                <dt>{t('gpus')}</dt>
                <dd>{c.ai.gpus.length ? gpuNames(c.ai.gpus) : t('no_gpu')}</dd>
              </div>
            </dl>
          </ConnectBlock>
        ) : null}
        {c.api ? (
          <ConnectBlock kind="api" title={t('connect_api')} hint={t('api_hint')}>
            <CopyLine label={t('api_base_url')} text={c.api.base_url} />
            <CopyLine label={t('api_example')} text={curlExample(c.api.base_url)} />
            <ApiKeysLink />
          </ConnectBlock>
        ) : null}
        {online && c.ssh ? <SshBlock ssh={c.ssh} /> : null}
        {tcp.length ? (
          <ConnectBlock kind="tcp" title={t('connect_tcp')} hint={t('tcp_hint')}>
            {tcp.map((p) => (
              <CopyLine key={p.port} label={p.name ? `${p.name} · ${t('tcp_port', { port: p.port })}` : t('tcp_port', { port: p.port })} text={tunnelCommand(marketOrigin(), id, p.port)} />
            ))}
            <ApiKeysLink />
          </ConnectBlock>
        ) : null}
        {online && c.logs ? <LogPanel id={id} name={name} /> : null}
        {online && c.terminal ? <TerminalPanel id={id} /> : null}
      </div>
    </>
  );
}

/** The section: loads the answer, and again (in the background) when the app or its device changes state. */
export function ConnectSection({ inst }: { inst: InstallationDetails }) {
  const t = useT();
  const state = useAsync((signal) => fetchAppConnect(inst.id, signal), [inst.id]);
  const { refresh } = state;
  const key = `${inst.status}|${inst.device_status}`;
  const seen = useRef(key);
  useEffect(() => {
    if (seen.current === key) return;
    seen.current = key;
    refresh();
  }, [key, refresh]);
  // Not the caller's to open (a member looking at another's app): no section at all.
  if (state.errorCode === 403 || state.errorCode === 404) return null;
  return (
    <Section id="app-connect" title={t('connect')} className="connect-section">
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.data ? <ConnectBlocks id={inst.id} name={inst.app_name} c={state.data} /> : state.loading ? <SkeletonLines lines={3} /> : null}
    </Section>
  );
}
