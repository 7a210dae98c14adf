// The devices table: the owner's devices page and a member's "Allocated to you" show the same
// columns (the devices page adds the specification and links each name to its details).
import type { ReactNode } from 'react';
import type { Device } from '../../api/types';
import { formatDateTime } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { StatusBadge, deviceTypeLabel, gpuText } from './deviceStatus';

export function DeviceTable({
  items,
  name = (d) => d.name || d.id,
  spec,
}: {
  items: Device[];
  /** The name cell (a link to the details, where the reader may open them). */
  name?: (d: Device) => ReactNode;
  /** The specification column's text; no such column without it. */
  spec?: (d: Device) => string;
}) {
  const t = useT();
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">{t('name')}</th>
            <th scope="col">{t('device_id')}</th>
            <th scope="col">{t('type')}</th>
            <th scope="col">{t('status')}</th>
            {spec ? <th scope="col">{t('specification')}</th> : null}
            <th scope="col">{t('gpus')}</th>
            <th scope="col">{t('last_seen')}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((d) => (
            <tr key={d.id} data-device-id={d.id}>
              <td>{name(d)}</td>
              <td className="mono">{d.id}</td>
              <td>{deviceTypeLabel(t, d.type)}</td>
              <td>
                <StatusBadge status={d.status} />
              </td>
              {spec ? <td>{spec(d)}</td> : null}
              <td>{d.spec ? gpuText(t, d.spec.gpus) : '-'}</td>
              <td>{formatDateTime(d.last_seen_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
