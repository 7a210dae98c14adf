import { Link } from 'react-router';
import { fetchNearby } from '../../api/market';
import type { ListPage, NearbyDevice } from '../../api/types';
import { PAGE_SIZE } from '../../constants';
import { LoadMore } from '../../components/LoadMore';
import { useAsync } from '../../lib/useAsync';
import { useInitialData } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { paths, usePublicPaths } from '../../lib/paths';
import { DeviceCard } from './DeviceCard';
import { useLocate, useNearbyPoint } from '../../components/location';

export function NearbyPage() {
  const t = useT();
  const p = usePublicPaths();
  const initial = useInitialData('nearby');
  const { at } = useNearbyPoint();
  const { locate, locating, note } = useLocate();
  const state = useAsync<ListPage<NearbyDevice>>((signal) => fetchNearby({ lat: at.lat, lng: at.lng }, signal), [at.lat, at.lng], initial);

  const items = state.data?.items ?? [];
  return (
    <div className="page container">
      <PageHeader
        title={t('nearby_title')}
        actions={
          <>
            <button type="button" className="button ghost" onClick={locate} disabled={locating}>
              <Icon name="nearby" size={16} /> {t('use_my_location')}
            </button>
            {!p.mobile ? (
              <Link className="button ghost" to={paths.nearby.map()}>
                <Icon name="map" size={16} /> {t('open_map')}
              </Link>
            ) : null}
          </>
        }
      />
      {note ? <p className="muted">{note}</p> : null}
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !state.data ? (
        <SkeletonLines lines={5} />
      ) : items.length ? (
        <>
          <ul className="card-grid" role="list">
            {items.map((d) => (
              <DeviceCard key={d.id} device={d} />
            ))}
          </ul>
          <LoadMore state={state} fetchPage={(offset) => fetchNearby({ lat: at.lat, lng: at.lng, offset, limit: PAGE_SIZE })} />
        </>
      ) : !state.error ? (
        <EmptyState level={2} icon="nearby" title={t('no_devices_nearby')} text={t('no_devices_nearby_hint')} />
      ) : null}
    </div>
  );
}
