// /app/details?id=: an installation's facts, state history, rental meter and actions, the doors
// to it (the Connect section: web, logs, terminal, SSH, TCP, API, AI), the GPUs it holds, live, and
// its snapshots and daily backup (SnapshotsSection).
// Also the phone's /m/app/details (issue 41).
import { useCallback } from 'react';
import { Link, useSearchParams } from 'react-router';
import { fetchInstallation } from '../../api/apps';
import type { Installation } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader, Section } from '../../components/sections';
import { AppIcon, displayTypeLabel } from '../../components/apps/cards';
import { AppActions, AppBadges, AppProgress, AppStatusChip, appStatusLabel, usePollWhileBusy } from '../../components/apps/appStatus';
import { ErrorPage } from '../../components/ErrorPage';
import { Icon } from '../../components/Icon';
import { formatCoins, formatDateTime, formatSize } from '../../lib/format';
import { usePublicPaths } from '../../lib/paths';
import { ConnectSection } from './connect/ConnectSection';
import { YourGpu } from './gpuUse';
import { ExtendForm } from './extendForm';
import { SnapshotsSection } from './SnapshotsSection';

/** Snapshots are taken in their own section, not among the head's actions. */
const SNAPSHOT_SECTION = ['snapshot'];

export default function AppDetailsPage() {
  const t = useT();
  const p = usePublicPaths();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const state = useAsync(id ? (signal) => fetchInstallation(id, signal) : null, [id]);
  const { setData } = state;
  const refresh = useCallback(() => {
    fetchInstallation(id)
      .then((d) => setData(() => d))
      .catch(() => {});
  }, [id, setData]);
  const inst = state.data;
  usePollWhileBusy(inst ? [inst] : [], refresh, inst?.kind === 'rent' && inst.status === 'running');
  if (!id || (state.errorCode === 404 && !inst)) return <ErrorPage code={404} />;
  const changed = (next: Installation) => {
    setData((d) => (d ? { ...d, ...next } : d));
    refresh();
  };
  return (
    <div className="page">
      <Link to={p.app()} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {!inst ? (
        <SkeletonLines lines={6} />
      ) : (
        <>
          <PageHeader title={inst.app_name} subtitle={inst.device_name || inst.device_id} />
          <div className="app-details-head" data-status={inst.status}>
            <AppIcon app={{ icon_url: inst.icon_url, name: inst.app_name }} size={64} />
            <AppStatusChip status={inst.status} />
            <AppBadges inst={inst} />
            <AppActions inst={inst} onChanged={changed} omit={SNAPSHOT_SECTION} />
          </div>
          {inst.status_reason && inst.status_reason_code !== 'device_offline' ? (
            <p className="app-reason" data-reason={inst.status_reason_code ?? ''}>
              {inst.status_reason}
            </p>
          ) : null}
          {!inst.device_online && inst.status !== 'not_install' ? <p className="note" data-testid="offline-hint">{t('offline_hint')}</p> : null}
          <AppProgress inst={inst} />
          <ConnectSection inst={inst} />
          <div className="device-sections">
            {inst.status !== 'not_install' ? <YourGpu deviceId={inst.device_id} gpus={inst.gpus} /> : null}
            <Section id="app-facts" title={t('facts')}>
              <dl className="facts">
                <div>
                  <dt>{t('kind')}</dt>
                  <dd>{inst.kind === 'rent' ? t('kind_rent') : t('kind_own')}</dd>
                </div>
                <div>
                  <dt>{t('device')}</dt>
                  <dd>
                    {inst.device_name} <span className="mono">{inst.device_id}</span>
                  </dd>
                </div>
                <div>
                  <dt>{t('display_type')}</dt>
                  <dd>{displayTypeLabel(t, inst.display_type)}</dd>
                </div>
                <div>
                  <dt>{t('version')}</dt>
                  <dd data-testid="app-version">{inst.version || '-'}</dd>
                </div>
                <div>
                  <dt>{t('holds')}</dt>
                  <dd>
                    {t('holds_text', {
                      count: inst.holds.cpu_cores,
                      cpu: inst.holds.cpu_cores,
                      memory: formatSize(inst.holds.memory_bytes),
                      disk: formatSize(inst.holds.disk_bytes),
                      gpu: inst.holds.gpu_count,
                    })}
                  </dd>
                </div>
                {inst.open_url && inst.kind !== 'rent' ? (
                  <div>
                    <dt>{t('web_address')}</dt>
                    <dd>
                      <a href={inst.open_url} target="_blank" rel="noopener noreferrer">
                        {inst.open_url}
                      </a>
                    </dd>
                  </div>
                ) : null}
                <div>
                  <dt>{t('installed_at')}</dt>
                  <dd>{formatDateTime(inst.created_at)}</dd>
                </div>
              </dl>
            </Section>
            {inst.rental ? (
              <Section id="app-rental" title={t('rental_meter')}>
                <dl className="facts">
                  <div>
                    <dt>{t('price')}</dt>
                    <dd>{`${formatCoins(inst.rental.price_per_hour)} ${t('coins')} ${t('per_hour')}`}</dd>
                  </div>
                  <div>
                    <dt>{t('billed')}</dt>
                    <dd data-testid="rental-billed">{`${formatCoins(inst.rental.billed)} ${t('coins')}`}</dd>
                  </div>
                  <div>
                    <dt>{t('unbilled')}</dt>
                    <dd>{`${formatCoins(inst.rental.unbilled)} ${t('coins')}`}</dd>
                  </div>
                  {inst.status === 'not_install' ? (
                    <div>
                      <dt>{t('ended_at')}</dt>
                      <dd data-testid="rental-ended-at">{formatDateTime(inst.history[inst.history.length - 1]?.at ?? inst.updated_at)}</dd>
                    </div>
                  ) : (
                    <div>
                      <dt>{t('ends_at')}</dt>
                      <dd data-testid="rental-ends-at">{formatDateTime(inst.rental.ends_at)}</dd>
                    </div>
                  )}
                </dl>
                {inst.rental.extendable ? <ExtendForm inst={inst} focus={params.get('extend') === '1'} onExtended={changed} /> : null}
              </Section>
            ) : null}
            <SnapshotsSection inst={inst} onChanged={changed} />
            <Section id="app-history" title={t('state_history')}>
              <ol className="app-history">
                {inst.history.map((h, n) => (
                  <li key={n}>
                    <span className="mono muted">{formatDateTime(h.at)}</span> {appStatusLabel(t, h.status)}
                    {h.version ? <span className="muted mono"> · {h.version}</span> : null}
                    {h.reason ? <span className="muted"> · {h.reason}</span> : null}
                  </li>
                ))}
              </ol>
            </Section>
          </div>
        </>
      )}
    </div>
  );
}
