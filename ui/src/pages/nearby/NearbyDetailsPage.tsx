import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { fetchApplications, fetchNearbyDevice } from '../../api/market';
import { useSession } from '../../stores/session';
import { useAsync } from '../../lib/useAsync';
import { useInitialData } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { Icon } from '../../components/Icon';
import { AppGrid, priceText } from '../../components/apps/cards';
import { StatusBadge } from '../../components/devices/deviceStatus';
import { NearbyFacts } from './DeviceCard';
import { paths, rentOnPath, usePublicPaths } from '../../lib/paths';
import { useNearbyPoint } from '../../components/location';
import type { GpuNearbyDevice } from '../../api/gpus';
import { formatSize } from '../../lib/format';
import { migText, verifiedWord } from '../../components/devices/gpuMarks';
import type { TFunction } from '../../lib/i18n';

/** The box's GPUs as it reads them (issue 38), how many are free and whether they passed their verification. */
function NearbyGpus({ t, device }: { t: TFunction; device: GpuNearbyDevice }) {
  if (!device.gpus.length) return null;
  const mark = verifiedWord(t, device.verified);
  const tone = device.verified === true ? 'ok' : device.verified === false ? 'failed' : 'never';
  return (
    <section className="nearby-gpus" aria-labelledby="nearby-gpus-title">
      <h2 id="nearby-gpus-title">
        {t('gpus')}
        {typeof device.gpus_free === 'number' ? <span className="muted device-gpus-free"> · {t('gpu_free_of', { free: device.gpus_free, total: device.gpus.length })}</span> : null}{' '}
        {mark ? <span className={`gpu-mark gpu-mark-${tone}`}>{mark}</span> : null}
      </h2>
      <div className="table-wrap">
        <table className="table">
          <thead>
            <tr>
              <th>#</th>
              <th>{t('gpu_model')}</th>
              <th>{t('gpu_vram')}</th>
              <th>{t('gpu_driver')}</th>
              <th>{t('gpu_cuda')}</th>
              <th>{t('gpu_compute_capability')}</th>
              <th>{t('gpu_mig')}</th>
            </tr>
          </thead>
          <tbody>
            {device.gpus.map((g, i) => (
              <tr key={g.uuid ?? i}>
                <td>{g.index ?? i}</td>
                <td>{g.name}</td>
                <td>{formatSize(g.vram)}</td>
                <td>{g.driver || '-'}</td>
                <td>{g.cuda || '-'}</td>
                <td>{g.compute_capability || '-'}</td>
                <td>{migText(t, g.mig)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Rent this box: pick an app, then the market's Rent dialog opens on it with this box picked. */
function NearbyRent({ device }: { device: GpuNearbyDevice }) {
  const t = useT();
  const navigate = useNavigate();
  const signedIn = useSession((s) => Boolean(s.token));
  const apps = useAsync((signal) => fetchApplications({ limit: 100 }, signal), []);
  const [appId, setAppId] = useState('');
  const list = apps.data?.items ?? [];
  const chosen = appId || list[0]?.id || '';
  const go = () => {
    const to = rentOnPath(chosen, device.id);
    navigate(signedIn ? to : paths.auth.signIn(to));
  };
  return (
    <section className="nearby-rent" aria-labelledby="nearby-rent-title">
      <h2 id="nearby-rent-title">{t('nearby_rent_title')}</h2>
      <div className="nearby-rent-row">
        <div className="field">
          <label htmlFor="nearby-rent-app">{t('nearby_rent_app')}</label>
          <select id="nearby-rent-app" value={chosen} onChange={(e) => setAppId(e.target.value)} disabled={!list.length}>
            {list.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className="button primary" disabled={!chosen} onClick={go}>
          {t('rent')}
        </button>
      </div>
      <p className="muted small">{t('nearby_rent_hint')}</p>
    </section>
  );
}

export function NearbyDetailsPage() {
  const t = useT();
  const p = usePublicPaths();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const initial = useInitialData('nearbyDetails');
  // Measured from the visitor's location when they gave it on the list (the server rendered from the centre).
  const { at } = useNearbyPoint();
  const state = useAsync(id ? (signal) => fetchNearbyDevice(id, at, signal) : null, [id, at.lat, at.lng], initial);
  const device: GpuNearbyDevice | undefined = state.data;
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
          <NearbyFacts device={device} className="facts" spec />
          <NearbyGpus t={t} device={device} />
          {!p.mobile ? <NearbyRent device={device} /> : null}
          <section>
            <h2>{t('apps_on_device')}</h2>
            {device.apps?.length ? <AppGrid apps={device.apps} /> : <EmptyState icon="app" title={t('no_apps')} />}
          </section>
        </article>
      )}
    </div>
  );
}
