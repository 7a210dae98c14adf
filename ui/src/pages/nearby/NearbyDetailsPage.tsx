import { Link, useSearchParams } from 'react-router';
import { fetchNearbyDevice } from '../../api/market';
import { useAsync } from '../../lib/useAsync';
import { useInitialData } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { Icon } from '../../components/Icon';
import { AppGrid, priceText } from '../../components/apps/cards';
import { StatusBadge } from '../../components/devices/deviceStatus';
import { NearbyFacts } from './DeviceCard';
import { usePublicPaths } from '../../lib/paths';
import { useNearbyPoint } from './location';

export function NearbyDetailsPage() {
  const t = useT();
  const p = usePublicPaths();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const initial = useInitialData('nearbyDetails');
  // Measured from the visitor's location when they gave it on the list (the server rendered from the centre).
  const { at } = useNearbyPoint();
  const state = useAsync(id ? (signal) => fetchNearbyDevice(id, at, signal) : null, [id, at.lat, at.lng], initial);
  const device = state.data;
  return (
    <div className="page container narrow">
      <Link to={p.nearby()} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !device ? (
        <SkeletonLines lines={6} />
      ) : !device ? (
        !state.error ? <EmptyState icon="nearby" title={t('device_not_found')} /> : null
      ) : (
        <article className="details">
          <header className="details-head">
            <span className="app-icon app-icon-initial" style={{ width: 72, height: 72 }} aria-hidden="true">
              <Icon name="devices" size={32} />
            </span>
            <div>
              <h1>{device.name}</h1>
              <StatusBadge status={device.status} showFailed={false} />
            </div>
            <div className="details-cta">
              <span className="price large">{priceText(t, device.price_per_hour)}</span>
            </div>
          </header>
          <NearbyFacts device={device} className="facts" />
          <section>
            <h2>{t('apps_on_device')}</h2>
            {device.apps?.length ? <AppGrid apps={device.apps} /> : <EmptyState icon="app" title={t('no_apps')} />}
          </section>
        </article>
      )}
    </div>
  );
}
