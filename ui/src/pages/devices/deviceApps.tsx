// The device page's "Installed apps": every app on the device (the owner's and the renters'),
// with status, progress and actions; polled while a transition is under way.
import { useCallback } from 'react';
import { Link } from 'react-router';
import { fetchDeviceApps } from '../../api/apps';
import type { Installation } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { AppActions, AppBadges, AppProgress, AppStatusChip, usePollWhileBusy } from '../../components/apps/appStatus';

export function DeviceApps({ deviceId }: { deviceId: string }) {
  const t = useT();
  const state = useAsync((signal) => fetchDeviceApps(deviceId, signal), [deviceId]);
  const { setData } = state;
  const refresh = useCallback(() => {
    fetchDeviceApps(deviceId)
      .then((d) => setData(() => d))
      .catch(() => {});
  }, [deviceId, setData]);
  usePollWhileBusy(state.data?.items ?? [], refresh);
  const replace = (next: Installation) =>
    setData((d) => (d ? { ...d, items: d.items.map((i) => (i.id === next.id ? next : i)) } : d));
  const items = state.data?.items ?? [];
  if (state.error) return <ErrorNote text={state.error} onRetry={state.reload} />;
  if (state.loading) return <SkeletonLines lines={2} />;
  if (!items.length) return <p className="muted">{t('installed_apps_empty')}</p>;
  return (
    <ul className="app-list compact">
      {items.map((i) => (
        <li key={i.id} className="app-row" data-installation={i.id} data-status={i.status}>
          <div className="app-row-main">
            <div className="app-row-title">
              {i.kind === 'own' ? <Link to={paths.console.appDetails(i.id)}>{i.app_name}</Link> : i.app_name}
              <span className="tag">{i.kind === 'rent' ? t('kind_rented_out') : t('kind_own')}</span>
            </div>
            <AppProgress inst={i} />
          </div>
          <AppStatusChip status={i.status} />
          <AppBadges inst={i} />
          {i.kind === 'own' ? <AppActions inst={i} onChanged={replace} /> : null}
        </li>
      ))}
    </ul>
  );
}
