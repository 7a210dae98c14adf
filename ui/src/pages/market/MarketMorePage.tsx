import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { searchApplications } from '../../api/market';
import type { AppCardData, ListPage } from '../../api/types';
import { PAGE_SIZE } from '../../constants';
import { useAsync } from '../../lib/useAsync';
import { useInitialData } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { LoadMore } from '../../components/LoadMore';
import { EmptyState, ErrorNote } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { formatNumber } from '../../lib/format';
import { AppGrid, AppGridSkeleton, categoryLabel, displayTypeLabel, tierLabel } from '../../components/apps/cards';
import { CATEGORIES, DISPLAY_TYPES, TIERS } from './catalogue';

export function MarketMorePage() {
  const t = useT();
  const [params, setParams] = useSearchParams();
  const keyword = params.get('keyword') ?? '';
  const category = params.get('category') ?? '';
  const displayType = params.get('display_type') ?? '';
  const tier = params.get('tier') ?? '';
  const initial = useInitialData('marketMore');
  const state = useAsync<ListPage<AppCardData>>(
    (signal) => searchApplications({ keyword, category, display_type: displayType, tier }, signal),
    [keyword, category, displayType, tier],
    initial,
  );
  const [draft, setDraft] = useState(keyword);

  const update = (patch: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(patch)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setParams(next);
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    update({ keyword: draft.trim() });
  };

  const items = state.data?.items ?? [];
  const total = state.data?.total ?? 0;
  return (
    <div className="page container">
      <PageHeader
        title={category ? categoryLabel(t, category) : t('market_more')}
        subtitle={state.data ? t('apps_count', { count: formatNumber(total) }) : undefined}
      />
      <form className="filters" role="search" onSubmit={onSubmit}>
        <div className="field inline">
          <label htmlFor="more-keyword">{t('search_apps')}</label>
          <input id="more-keyword" type="search" value={draft} onChange={(e) => setDraft(e.target.value)} />
        </div>
        <div className="field inline">
          <label htmlFor="more-category">{t('category')}</label>
          <select id="more-category" value={category} onChange={(e) => update({ category: e.target.value })}>
            <option value="">{t('all')}</option>
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {categoryLabel(t, c)}
              </option>
            ))}
          </select>
        </div>
        <div className="field inline">
          <label htmlFor="more-type">{t('display_type')}</label>
          <select id="more-type" value={displayType} onChange={(e) => update({ display_type: e.target.value })}>
            <option value="">{t('all')}</option>
            {DISPLAY_TYPES.map((d) => (
              <option key={d} value={d}>
                {displayTypeLabel(t, d)}
              </option>
            ))}
          </select>
        </div>
        <div className="field inline">
          <label htmlFor="more-tier">{t('tier')}</label>
          <select id="more-tier" value={tier} onChange={(e) => update({ tier: e.target.value })}>
            <option value="">{t('all')}</option>
            {TIERS.map((x) => (
              <option key={x} value={x}>
                {tierLabel(t, x)}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="button primary">
          {t('search')}
        </button>
      </form>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !state.data ? (
        <AppGridSkeleton />
      ) : items.length ? (
        <>
          <AppGrid apps={items} />
          <LoadMore
            state={state}
            fetchPage={(offset) => searchApplications({ keyword, category, display_type: displayType, tier, offset, limit: PAGE_SIZE })}
          />
        </>
      ) : !state.error ? (
        // A search or a filter that matched nothing says so, not that apps will come (issue 26).
        keyword || category || displayType || tier ? (
          <EmptyState
            level={2}
            icon="search"
            title={t('no_results')}
            text={keyword ? t('no_results_for', { keyword }) : t('no_results_filters')}
          />
        ) : (
          <EmptyState level={2} icon="search" title={t('no_apps')} text={t('no_apps_hint')} />
        )
      ) : null}
    </div>
  );
}
