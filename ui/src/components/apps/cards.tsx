// Apps as the market and the nearby pages show them: cards, grids, labels and prices.
import type { App, AppCardData } from '../../api/types';
import { formatCoins } from '../../lib/format';
import { useLang, useT, type TFunction } from '../../lib/i18n';
import { Reused } from '../../lib/fragments';
import { usePublicPaths } from '../../lib/paths';
import { ListLink } from '../ListLink';

/** The translation of `<prefix><value>`, or the value itself when there is none. */
function labelOf(t: TFunction, prefix: string, value: string): string {
  const key = `${prefix}${value}` as Parameters<TFunction>[0];
  const text = t(key);
  return text === key ? value : text;
}

export function categoryLabel(t: TFunction, category: string): string {
  return labelOf(t, 'cat_', category);
}

/** The key part of a wire value: `AI server` → `ai_server`, `Z-SERVER` → `z_server`. */
export function labelSlug(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

/** An app's display type (docs/product.md §3: Desktop, Lite App, … AI server, Z-SERVER) in the language. */
export function displayTypeLabel(t: TFunction, displayType: string): string {
  const key = `dtype_${labelSlug(displayType)}` as Parameters<TFunction>[0];
  const text = t(key);
  return text === key ? displayType : text;
}

export function tierLabel(t: TFunction, tier: string): string {
  return labelOf(t, 'tier_', tier);
}

export function priceText(t: TFunction, pricePerHour: number): string {
  return pricePerHour > 0 ? `${formatCoins(pricePerHour)} ${t('coins')} ${t('per_hour')}` : t('free');
}

/** An app's price in the market: its cheapest offer and how many there are, or none now. */
export function offersText(t: TFunction, price: App['price_per_hour']): string {
  if (price.from === null || price.from === undefined || !price.offers) return t('no_offers_now');
  const n = price.offers === 1 ? t('offers_one') : t('offers_n', { n: price.offers });
  return `${t('price_from', { price: formatCoins(price.from) })} · ${n}`;
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

/** Category, display type and tier of an app. */
export function AppChips({ app }: { app: Pick<App, 'category' | 'display_type' | 'tier'> }) {
  const t = useT();
  return (
    <div className="chips">
      <span className="chip">{categoryLabel(t, app.category)}</span>
      {app.display_type ? <span className="chip">{displayTypeLabel(t, app.display_type)}</span> : null}
      {app.tier ? <span className={`chip tier-${app.tier}`}>{tierLabel(t, app.tier)}</span> : null}
    </div>
  );
}

export function AppCard({ app }: { app: AppCardData }) {
  const t = useT();
  const p = usePublicPaths();
  return (
    // One flat grid (styles/front.css `.card-link`): no wrapper elements, since 34 cards are in
    // the market home's first HTML.
    <li className="card app-card">
      <ListLink to={p.details(app.id)} className="card-link">
        <AppIcon app={app} />
        <h3>{app.name}</h3>
        <span className="muted small">{app.publisher}</span>
        <p className="app-card-summary">{app.summary}</p>
        <AppChips app={app} />
        <span className="price">{offersText(t, app.price_per_hour)}</span>
      </ListLink>
    </li>
  );
}

/**
 * What a card shows of an app: the key of its reused markup on the server (lib/fragments.tsx).
 * Leaving out the long fields (description, requirements) keeps the key cheap to build; a unit
 * test changes every field of an app and checks the card's markup changes only with this.
 */
export function cardInputs(app: AppCardData): unknown[] {
  const price = app.price_per_hour;
  return [app.id, app.name, app.publisher, app.summary, app.icon_url, app.category, app.display_type, app.tier, price.from, price.offers];
}

export function AppGrid({ apps, compact = false }: { apps: AppCardData[]; compact?: boolean }) {
  const lang = useLang();
  const { mobile } = usePublicPaths();
  // A card is the same markup for the same app, language and path prefix: the server renders it
  // once (lib/fragments.tsx).
  return (
    <ul className={compact ? 'card-grid compact' : 'card-grid'} role="list">
      {apps.map((a) => (
        <Reused key={a.id} inputs={['app-card', lang, mobile, ...cardInputs(a)]}>
          <AppCard app={a} />
        </Reused>
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
