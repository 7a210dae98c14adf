import { Link } from 'react-router';
import type { NearbyDevice } from '../../api/types';
import { formatDistance, formatSize, gpuCount } from '../../lib/format';
import { useT, type TFunction } from '../../lib/i18n';
import { priceText, useMarketPaths } from '../market/shared';

export function statusLabel(t: TFunction, status: string): string {
  if (status === 'online') return t('status_online');
  if (status === 'creating') return t('status_creating');
  // SPEC.md §4: unknown is shown as offline.
  return t('status_offline');
}

export function gpuText(t: TFunction, gpus: NearbyDevice['gpus']): string {
  if (Array.isArray(gpus)) {
    if (!gpus.length) return t('no_gpu');
    return gpus.map((g) => (g.vram ? `${g.name} (${formatSize(g.vram)})` : g.name)).join(', ');
  }
  const n = gpuCount(gpus);
  if (!n) return t('no_gpu');
  return typeof gpus === 'string' ? gpus : formatSize(gpus as number);
}

export function DeviceCard({ device }: { device: NearbyDevice }) {
  const t = useT();
  const p = useMarketPaths();
  const status = device.status === 'online' || device.status === 'creating' ? device.status : 'offline';
  return (
    <li className="card device-card">
      <Link to={p.nearbyDetails(device.id)} className="card-link">
        <div className="device-card-head">
          <h3>{device.name}</h3>
          <span className={`status status-${status}`}>{statusLabel(t, device.status)}</span>
        </div>
        <dl className="mini-facts">
          <div>
            <dt>{t('device_type')}</dt>
            <dd>{device.type}</dd>
          </div>
          <div>
            <dt>{t('distance')}</dt>
            <dd>{formatDistance(device.distance_km)}</dd>
          </div>
          <div>
            <dt>{t('gpus')}</dt>
            <dd>{gpuText(t, device.gpus)}</dd>
          </div>
        </dl>
        <span className="price">{priceText(t, device.price_per_hour)}</span>
      </Link>
    </li>
  );
}
