// Stand-in for the real map (to be replaced by a tile map): devices plotted around the configured centre.
import { useMemo } from 'react';
import { Link } from 'react-router';
import { fetchNearby } from '../../api/market';
import { LIST_LIMIT_MAX } from '../../constants';
import { useAsync } from '../../app/data';
import { useBoot } from '../../app/boot';
import { useT } from '../../app/i18n';
import { ErrorNote } from '../../components/ui';
import { formatDistance } from '../../format';
import { paths } from '../../paths';

export default function MapView() {
  const t = useT();
  const boot = useBoot();
  const center = boot.config.map.center;
  const state = useAsync((signal) => fetchNearby({ lat: center.lat, lng: center.lng, limit: LIST_LIMIT_MAX }, signal), [center.lat, center.lng]);
  const items = state.data?.items ?? [];
  const points = useMemo(() => {
    const span = Math.max(0.05, ...items.map((d) => Math.max(Math.abs(d.lat - center.lat), Math.abs(d.lng - center.lng))));
    return items.map((d) => ({
      device: d,
      x: 50 + ((d.lng - center.lng) / span) * 45,
      y: 50 - ((d.lat - center.lat) / span) * 45,
    }));
  }, [items, center.lat, center.lng]);
  return (
    <div className="map-view">
      {!boot.config.map.tileUrl ? <p className="map-note">{t('map_not_configured')}</p> : null}
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      <svg className="map-canvas" viewBox="0 0 100 100" role="img" aria-label={t('nearby_map')}>
        <defs>
          <pattern id="grid" width="10" height="10" patternUnits="userSpaceOnUse">
            <path d="M10 0H0V10" fill="none" stroke="currentColor" strokeWidth="0.1" />
          </pattern>
        </defs>
        <rect width="100" height="100" fill="url(#grid)" />
        <circle cx="50" cy="50" r="1.4" className="map-center" />
        {points.map(({ device, x, y }) => (
          <circle key={device.id} cx={x} cy={y} r="1.6" className={`map-dot status-${device.status}`}>
            <title>{device.name}</title>
          </circle>
        ))}
      </svg>
      <ul className="map-list">
        {items.map((d) => (
          <li key={d.id}>
            <Link to={paths.nearby.details(d.id)}>{d.name}</Link>
            <span className="muted">{formatDistance(d.distance_km)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
