import { Link } from 'react-router';
import { fetchDevices } from '../../api/devices';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { EmptyState, ErrorNote, PageHeader, SkeletonLines } from '../../components/ui';
import { Icon } from '../../components/Icon';
import { describeResources, formatDateTime } from '../../format';
import { paths } from '../../paths';
import { resourceWords } from '../market/shared';
import { statusLabel } from '../nearby/shared';

export default function DevicesPage() {
  const t = useT();
  const state = useAsync((signal) => fetchDevices({}, signal), []);
  const items = state.data?.items ?? [];
  return (
    <div className="page">
      <PageHeader
        title={t('devices')}
        actions={
          <>
            <Link className="button ghost" to={paths.console.zcloudCreate}>
              <Icon name="plus" size={16} /> {t('create_zcloud')}
            </Link>
            <Link className="button primary" to={paths.console.link}>
              <Icon name="link" size={16} /> {t('link_device')}
            </Link>
          </>
        }
      />
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines lines={5} />
      ) : items.length ? (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('type')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('specification')}</th>
                <th scope="col">{t('last_seen')}</th>
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Link to={paths.console.deviceDetails(d.id)}>{d.name || d.id}</Link>
                  </td>
                  <td>{d.type}</td>
                  <td>
                    <span className={`status status-${d.status === 'online' || d.status === 'creating' ? d.status : 'offline'}`}>
                      {statusLabel(t, d.status)}
                    </span>
                  </td>
                  <td>{d.spec ? describeResources({ ...d.spec, gpus: d.spec.gpus }, resourceWords(t)) : '-'}</td>
                  <td>{formatDateTime(d.last_seen_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : !state.error ? (
        <EmptyState
          icon="devices"
          title={t('no_devices')}
          text={t('no_devices_hint')}
          action={
            <Link className="button primary" to={paths.console.link}>
              {t('link_device')}
            </Link>
          }
        />
      ) : null}
    </div>
  );
}
