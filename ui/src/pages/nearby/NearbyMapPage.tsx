import { lazy, Suspense, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { useT } from '../../lib/i18n';
import { useBoot } from '../../stores/boot';
import { Icon } from '../../components/Icon';
import { LanguageSwitcher } from '../../components/LanguageSwitcher';
import { Spinner } from '../../components/placeholders';
import { paths } from '../../lib/paths';

// The map code is its own chunk, fetched only on this page and only after hydration.
const MapView = lazy(() => import('./MapView'));

export function NearbyMapPage() {
  const t = useT();
  const boot = useBoot();
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  const loading = (
    <div className="map-loading">
      <Spinner label={t('map_loading')} />
      <span>{t('map_loading')}</span>
    </div>
  );
  return (
    <div className="map-page">
      <header className="map-header">
        <Link to={paths.nearby.home()} className="button ghost small">
          <Icon name="list" size={16} /> {t('list_view')}
        </Link>
        <h1>{t('nearby_map')}</h1>
        <span className="muted hide-narrow">{boot.productName}</span>
        <LanguageSwitcher />
      </header>
      <main id="main" className="map-container">
        {mounted ? <Suspense fallback={loading}><MapView /></Suspense> : loading}
      </main>
    </div>
  );
}
