import { Link, useLocation } from 'react-router';
import type { App } from '../../api/types';
import { describeResources, formatCoins, type ResourceWords } from '../../lib/format';
import { paths } from '../../lib/paths';
import { useT, type TFunction } from '../../lib/i18n';

export const CATEGORIES = ['top_picks', 'AI', 'Metaverse', 'Game', 'Work', 'Home', 'Others', 'Z-CLOUD'] as const;
export const DISPLAY_TYPES = ['Desktop', 'Lite App', 'NAS', 'AI compute', 'Server', 'Remote desktop', 'AI server', 'Z-SERVER'] as const;
export const TIERS = ['high', 'standard', 'basic'] as const;

export function categoryLabel(t: TFunction, category: string): string {
  const key = `cat_${category}` as Parameters<TFunction>[0];
  const text = t(key);
  return text === key ? category : text;
}

export function tierLabel(t: TFunction, tier: string): string {
  const key = `tier_${tier}` as Parameters<TFunction>[0];
  const text = t(key);
  return text === key ? tier : text;
}

export function resourceWords(t: TFunction): ResourceWords {
  return { cores: t('cores_cpu'), memory: t('gb_memory'), disk: t('gb_ssd_disk'), noGpu: t('no_gpu') };
}

export function priceText(t: TFunction, pricePerHour: number): string {
  return pricePerHour > 0 ? `${formatCoins(pricePerHour)} ${t('coins')} ${t('per_hour')}` : t('free');
}

/** Market and nearby links stay inside /m/ on the mobile pages. */
export function useMarketPaths() {
  const { pathname } = useLocation();
  const mobile = pathname.startsWith('/m/');
  return mobile
    ? {
        mobile,
        market: paths.mobile.market,
        more: paths.mobile.more,
        details: paths.mobile.details,
        nearby: paths.mobile.nearby,
        nearbyDetails: paths.mobile.nearbyDetails,
      }
    : {
        mobile,
        market: paths.market.home,
        more: paths.market.more,
        details: paths.market.details,
        nearby: paths.nearby.home,
        nearbyDetails: paths.nearby.details,
      };
}

export function AppIcon({ app, size = 48 }: { app: Pick<App, 'icon_url' | 'name'>; size?: number }) {
  return app.icon_url ? (
    <img className="app-icon" src={app.icon_url} alt="" width={size} height={size} loading="lazy" />
  ) : (
    <span className="app-icon app-icon-initial" style={{ width: size, height: size }} aria-hidden="true">
      {(app.name || '?').charAt(0).toUpperCase()}
    </span>
  );
}

export function AppCard({ app }: { app: App }) {
  const t = useT();
  const p = useMarketPaths();
  return (
    <li className="card app-card">
      <Link to={p.details(app.id)} className="card-link">
        <div className="app-card-top">
          <AppIcon app={app} />
          <div className="app-card-title">
            <h3>{app.name}</h3>
            <span className="muted small">{app.publisher}</span>
          </div>
        </div>
        <p className="app-card-summary">{app.summary}</p>
        <div className="chips">
          <span className="chip">{categoryLabel(t, app.category)}</span>
          {app.display_type ? <span className="chip">{app.display_type}</span> : null}
          {app.tier ? <span className={`chip tier-${app.tier}`}>{tierLabel(t, app.tier)}</span> : null}
        </div>
        <div className="app-card-foot">
          <span className="price">{priceText(t, app.price_per_hour)}</span>
        </div>
      </Link>
    </li>
  );
}

export function AppGrid({ apps, compact = false }: { apps: App[]; compact?: boolean }) {
  return (
    <ul className={compact ? 'card-grid compact' : 'card-grid'} role="list">
      {apps.map((a) => (
        <AppCard key={a.id} app={a} />
      ))}
    </ul>
  );
}

export function AppGridSkeleton({ count = 8 }: { count?: number }) {
  return (
    <ul className="card-grid" aria-hidden="true">
      {Array.from({ length: count }, (_, i) => (
        <li key={i} className="card app-card skeleton-card">
          <span className="skeleton" style={{ width: 48, height: 48, borderRadius: 12 }} />
          <span className="skeleton" style={{ width: '70%' }} />
          <span className="skeleton" style={{ width: '90%' }} />
        </li>
      ))}
    </ul>
  );
}

export { describeResources };
