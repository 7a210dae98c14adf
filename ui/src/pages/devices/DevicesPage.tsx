import { useCallback } from 'react';
import { Link, useSearchParams } from 'react-router';
import { fetchDevices } from '../../api/devices';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { paths } from '../../lib/paths';
import { deviceTypeLabel, statusLabel } from '../../components/devices/deviceStatus';
import { DeviceTable } from '../../components/devices/DeviceTable';
import { useInterval } from '../../lib/timing';
import { DEVICE_REFRESH_MS, DEVICE_STATUSES, DEVICE_TYPES, specText } from './deviceInfo';

export default function DevicesPage() {
  const t = useT();
  const [params, setParams] = useSearchParams();
  const type = params.get('type') ?? '';
  const status = params.get('status') ?? '';
  const filter = { type: type || undefined, status: status || undefined };
  const state = useAsync((signal) => fetchDevices(filter, signal), [type, status]);
  const { setData } = state;
  // Live status: refresh quietly (no skeleton) while the page is open.
  const refresh = useCallback(() => {
    fetchDevices({ type: type || undefined, status: status || undefined })
      .then((d) => setData(() => d))
      .catch(() => {});
  }, [type, status, setData]);
  useInterval(refresh, DEVICE_REFRESH_MS);
  const setFilter = (key: 'type' | 'status', value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: true });
  };
  const items = state.data?.items ?? [];
  const filtered = Boolean(type || status);
  return (
    <div className="page">
      <PageHeader
        title={t('devices')}
        actions={
          <>
            <Link className="button ghost" to={paths.console.zcloudCreate()}>
              <Icon name="plus" size={16} /> {t('create_zcloud')}
            </Link>
            <Link className="button primary" to={paths.console.link()}>
              <Icon name="link" size={16} /> {t('link_device')}
            </Link>
          </>
        }
      />
      <div className="filters" role="search">
        <div className="field">
          <label htmlFor="device-type-filter">{t('type')}</label>
          <select id="device-type-filter" value={type} onChange={(e) => setFilter('type', e.target.value)}>
            <option value="">{t('all_types')}</option>
            {DEVICE_TYPES.map((x) => (
              <option key={x} value={x}>
                {deviceTypeLabel(t, x)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="device-status-filter">{t('status')}</label>
          <select id="device-status-filter" value={status} onChange={(e) => setFilter('status', e.target.value)}>
            <option value="">{t('all_statuses')}</option>
            {DEVICE_STATUSES.map((x) => (
              <option key={x} value={x}>
                {statusLabel(t, x)}
              </option>
            ))}
          </select>
        </div>
      </div>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !state.data ? (
        <SkeletonLines lines={5} />
      ) : items.length ? (
        <DeviceTable
          items={items}
          name={(d) => <Link to={paths.console.deviceDetails(d.id)}>{d.name || d.id}</Link>}
          spec={(d) => specText(t, d.spec)}
        />
      ) : !state.error ? (
        filtered ? (
          <EmptyState icon="devices" title={t('no_devices')} />
        ) : (
          <EmptyState
            icon="devices"
            title={t('no_devices')}
            text={t('no_devices_hint')}
            action={
              <Link className="button primary" to={paths.console.link()}>
                {t('link_device')}
              </Link>
            }
          />
        )
      ) : null}
    </div>
  );
}
