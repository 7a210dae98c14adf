// /on-demand (public): the open demands, newest first, each with its terms and its distance from
// the viewer (the map's centre until they share their location). Taking one is on the signed-in
// /demands-and-offers page, where each of one's devices shows whether it qualifies.
import { useState } from 'react';
import { Link } from 'react-router';
import { fetchBoard } from '../../api/orders';
import { DemandTerms, OrderDeadline } from './orders';
import { EmptyState, ErrorNote } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';
import { useBoot, useInitialData } from '../../stores/boot';

export function OnDemandPage() {
  const t = useT();
  const boot = useBoot();
  const [at, setAt] = useState(boot.config.map.center);
  const [note, setNote] = useState<string | null>(null);
  // The server rendered the board for the map's centre (src/orders/page.rs); a shared location loads it again.
  const initial = useInitialData('onDemand');
  const state = useAsync((signal) => fetchBoard(at, signal), [at.lat, at.lng], initial);
  const locate = () => {
    if (!('geolocation' in navigator)) return setNote(t('location_denied'));
    navigator.geolocation.getCurrentPosition(
      (pos) => {
        setNote(null);
        setAt({ lat: pos.coords.latitude, lng: pos.coords.longitude });
      },
      () => setNote(t('location_denied')),
      { timeout: 10_000 },
    );
  };
  const items = state.data?.items ?? [];
  return (
    <div className="page container">
      <PageHeader
        title={t('on_demand_title')}
        subtitle={t('on_demand_text')}
        actions={
          <>
            <button type="button" className="button ghost" onClick={locate}>
              <Icon name="nearby" size={16} /> {t('use_my_location')}
            </button>
            {/* Shown signed out too (the console asks to sign in and comes back): the server
                renders the page without the session, and a button appearing after hydration
                wrapped the header and moved the board (a layout shift of 0.16, issue 41). */}
            <Link className="button ghost" to={paths.console.demands()}>
              {t('demands_and_offers')}
            </Link>
            <Link className="button primary" to={paths.onDemand.placeOrder()}>
              <Icon name="plus" size={16} /> {t('place_an_order')}
            </Link>
          </>
        }
      />
      {note ? <p className="muted">{note}</p> : null}
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !state.data ? (
        // Not the skeleton: the server renders this page's content.
        <p className="muted" role="status">
          {t('loading')}
        </p>
      ) : items.length ? (
        <ul className="app-list" aria-label={t('board_title')}>
          {items.map((o) => (
            <li key={o.id} className="app-row order-row" data-demand={o.id}>
              <div className="app-row-main">
                <div className="app-row-title">
                  <span>{o.name}</span>
                  <span className="muted small-text">{t('demand_by', { name: o.demander.name })}</span>
                </div>
                <DemandTerms order={o} />
                <OrderDeadline order={o} />
              </div>
            </li>
          ))}
        </ul>
      ) : !state.error ? (
        <EmptyState level={2} icon="demands" title={t('no_demands')} text={t('on_demand_text')} />
      ) : null}
    </div>
  );
}
