import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { fetchApplications } from '../../api/market';
import { useAsync } from '../../lib/useAsync';
import { useInitialData } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote } from '../../components/placeholders';
import { Icon } from '../../components/Icon';
import { formatNumber } from '../../lib/format';
import { paths, usePublicPaths } from '../../lib/paths';
import { AppGrid, AppGridSkeleton, categoryLabel } from '../../components/apps/cards';
import { CATEGORIES } from './catalogue';
import { ListLink } from '../../components/ListLink';

export function MarketPage() {
  const t = useT();
  const p = usePublicPaths();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const category = params.get('category') ?? '';
  const initial = useInitialData('market');
  const state = useAsync((signal) => fetchApplications({ category }, signal), [category], initial);
  const topInitial = useInitialData('marketTopPicks');
  const top = useAsync(
    category ? null : (signal) => fetchApplications({ category: 'top_picks' }, signal),
    [category],
    category ? undefined : topInitial,
  );
  const [keyword, setKeyword] = useState('');

  const onSearch = (e: FormEvent) => {
    e.preventDefault();
    navigate(p.more({ keyword: keyword.trim(), category }));
  };

  const items = state.data?.items ?? [];
  return (
    <div className={p.mobile ? 'page market-page mobile-page' : 'page market-page'}>
      {!p.mobile ? (
        <section className="hero">
          <div className="container hero-inner">
            <h1>{t('hero_title')}</h1>
            <p>{t('hero_text')}</p>
            <div className="hero-actions">
              <Link className="button primary" to={paths.nearby.home()}>
                <Icon name="nearby" size={18} /> {t('browse_nearby')}
              </Link>
              <Link className="button ghost" to={paths.download()}>
                <Icon name="download" size={18} /> {t('get_client')}
              </Link>
            </div>
          </div>
        </section>
      ) : (
        <h1 className="visually-hidden">{t('explore_market')}</h1>
      )}
      <div className="container">
        <div className="toolbar">
          <nav className="category-tabs" aria-label={t('category')}>
            <ListLink to={p.market()} className={category === '' ? 'tab active' : 'tab'} aria-current={category === '' ? 'page' : undefined}>
              {t('all')}
            </ListLink>
            {CATEGORIES.map((c) => (
              <ListLink
                key={c}
                to={p.market(c)}
                className={category === c ? 'tab active' : 'tab'}
                aria-current={category === c ? 'page' : undefined}
              >
                {categoryLabel(t, c)}
              </ListLink>
            ))}
          </nav>
          <form className="search-form" role="search" onSubmit={onSearch}>
            <label className="visually-hidden" htmlFor="market-search">
              {t('search_apps')}
            </label>
            <input
              id="market-search"
              type="search"
              placeholder={t('search_apps')}
              value={keyword}
              onChange={(e) => setKeyword(e.target.value)}
            />
            <button type="submit" className="icon-button" aria-label={t('search')}>
              <Icon name="search" size={18} />
            </button>
          </form>
        </div>
        {!category && top.data?.items.length ? (
          <section className="top-picks" aria-labelledby="top-picks-title">
            <div className="section-head">
              <h2 id="top-picks-title">
                <Icon name="star" size={18} /> {t('cat_top_picks')}
              </h2>
              <Link className="button ghost small" to={p.market('top_picks')}>
                {t('see_all_top_picks')} <Icon name="chevronRight" size={14} />
              </Link>
            </div>
            <AppGrid apps={top.data.items} compact />
          </section>
        ) : null}
        <div className="section-head">
          <h2>{category ? categoryLabel(t, category) : t('all_apps')}</h2>
          {state.data ? (
            <span className="muted">{t('apps_count', { count: formatNumber(state.data.total ?? items.length) })}</span>
          ) : null}
          {state.data && state.data.total > items.length ? (
            <Link className="button ghost small" to={p.more({ category })}>
              {category ? t('see_all_in', { category: categoryLabel(t, category) }) : t('see_all_apps')} <Icon name="chevronRight" size={14} />
            </Link>
          ) : null}
        </div>
        {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
        {state.loading && !state.data ? (
          <AppGridSkeleton />
        ) : items.length ? (
          <AppGrid apps={items} />
        ) : !state.error ? (
          <EmptyState icon="market" title={t('no_apps')} text={t('no_apps_hint')} />
        ) : null}
      </div>
    </div>
  );
}
