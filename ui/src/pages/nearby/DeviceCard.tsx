import type { NearbyDevice } from '../../api/types';
import { priceText } from '../../components/apps/cards';
import { StatusBadge, deviceTypeLabel, gpuText } from '../../components/devices/deviceStatus';
import { formatDistance, formatSize } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { usePublicPaths } from '../../lib/paths';
import { ListLink } from '../../components/ListLink';

/** Type, distance and GPUs of a nearby device; with `spec`, its cores, memory and disk. */
export function NearbyFacts({ device, className, spec = false }: { device: NearbyDevice; className: string; spec?: boolean }) {
  const t = useT();
  return (
    <dl className={className}>
      <div>
        <dt>{t('device_type')}</dt>
        <dd>{deviceTypeLabel(t, device.type)}</dd>
      </div>
      <div>
        <dt>{t('distance')}</dt>
        <dd>{formatDistance(device.distance_km)}</dd>
      </div>
      <div>
        <dt>{t('gpus')}</dt>
        <dd>{gpuText(t, device.gpus)}</dd>
      </div>
      {spec && device.cpu_cores > 0 ? (
        <div>
          <dt>{t('device_spec')}</dt>
          <dd data-testid="nearby-spec">{t('offer_spec', { cores: device.cpu_cores, memory: formatSize(device.memory_bytes), disk: formatSize(device.disk_bytes) })}</dd>
        </div>
      ) : null}
    </dl>
  );
}

/** A device of the nearby list. */
export function DeviceCard({ device }: { device: NearbyDevice }) {
  const t = useT();
  const p = usePublicPaths();
  return (
    <li className="card device-card">
      <ListLink to={p.nearbyDetails(device.id)} className="card-link">
        <div className="device-card-head">
          <h3>{device.name}</h3>
          <StatusBadge status={device.status} showFailed={false} />
        </div>
        <NearbyFacts device={device} className="mini-facts" />
        <span className="price">{priceText(t, device.price_per_hour)}</span>
      </ListLink>
    </li>
  );
}
