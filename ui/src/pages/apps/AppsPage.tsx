// /app: my installations (own and rented) with status chips, install progress, the actions the
// state allows and Open; polled while a transition is under way. `?show=ended`: the history of
// removed apps and ended rentals, each rental with what it was charged in all. Below them, the data
// kept of ended rentals and removed apps (KeptData), when there is some. Also the phone's
// /m/app (issue 41), where its links stay on the phone pages and AI compute (no phone page) is left out.
import { useCallback } from 'react';
import { Link } from 'react-router';
import { fetchInstallations } from '../../api/apps';
import type { Installation } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useQueryChoice } from '../../lib/useQueryChoice';
import { formatCoins } from '../../lib/format';
import type { MessageKey } from '../../i18n';
import { useT } from '../../lib/i18n';
import { AsyncItems, PageHeader } from '../../components/sections';
import { AllocatedToMe } from './AllocatedToMe';
import { KeptData } from './KeptData';
import { AppIcon } from '../../components/apps/cards';
import { AppActions, AppBadges, AppProgress, AppStatusChip, usePollWhileBusy } from '../../components/apps/appStatus';
import { paths, usePublicPaths } from '../../lib/paths';
import { useSession } from '../../stores/session';

const SHOWS: { value: string | null; label: MessageKey; empty: MessageKey; status?: string }[] = [
  { value: null, label: 'apps_current', empty: 'apps_empty' },
  { value: 'ended', label: 'apps_ended', empty: 'apps_ended_empty', status: 'not_install' },
];

export default function AppsPage() {
  const t = useT();
  // A company member's menu is /app only (docs/product.md §2): no details or AI compute pages to link to.
  const member = useSession((s) => s.userType === 'member');
  const p = usePublicPaths();
  const [show, choose] = useQueryChoice('show', SHOWS);
  const state = useAsync((signal) => fetchInstallations({ status: show.status, limit: 100 }, signal), [show.status]);
  const { setData } = state;
  const refresh = useCallback(() => {
    fetchInstallations({ status: show.status, limit: 100 })
      .then((d) => setData(() => d))
      .catch(() => {});
  }, [setData, show.status]);
  usePollWhileBusy(state.data?.items ?? [], refresh);
  const replace = (next: Installation) =>
    setData((d) => (d ? { ...d, items: d.items.map((i) => (i.id === next.id ? next : i)) } : d));
  return (
    <div className="page">
      <PageHeader
        title={t('z_app')}
        subtitle={t('apps_subtitle')}
        actions={
          <>
            {member || p.mobile ? null : (
              <Link className="button ghost" to={paths.console.aiCompute()}>
                {t('ai_compute')}
              </Link>
            )}
            <Link className="button primary" to={p.market()}>
              {t('explore_market')}
            </Link>
          </>
        }
      />
      <div className="segmented" role="group" aria-label={t('apps_show')}>
        {SHOWS.map((s) => (
          <button key={s.label} type="button" aria-pressed={s === show} onClick={() => choose(s)}>
            {t(s.label)}
          </button>
        ))}
      </div>
      <AsyncItems state={state} emptyIcon="/app" emptyTitle={t(show.empty)} emptyLevel={2}>
        {(items) => (
          <ul className="app-list">
            {items.map((i) => (
              <li key={i.id} className="app-row" data-installation={i.id} data-status={i.status}>
                <AppIcon app={{ icon_url: i.icon_url, name: i.app_name }} size={44} />
                <div className="app-row-main">
                  <div className="app-row-title">
                    {member ? <span>{i.app_name}</span> : <Link to={p.appDetails(i.id)}>{i.app_name}</Link>}
                    <span className="tag">{i.kind === 'rent' ? t('kind_rent') : t('kind_own')}</span>
                  </div>
                  <div className="muted small-text">
                    {i.device_name || i.device_id}
                  </div>
                  {i.status_reason && i.device_online ? <div className="app-reason">{i.status_reason}</div> : null}
                  {i.rental && i.status === 'not_install' ? (
                    <div className="muted small-text" data-testid="rental-total">
                      {t('rental_charged_total', { coins: formatCoins(i.rental.billed) })}
                    </div>
                  ) : null}
                  <AppProgress inst={i} />
                </div>
                <AppStatusChip status={i.status} />
                <AppBadges inst={i} />
                <AppActions inst={i} onChanged={replace} />
              </li>
            ))}
          </ul>
        )}
      </AsyncItems>
      <KeptData listed={state.data?.items.map((i) => `${i.id}:${i.status}`).join(' ')} />
      <AllocatedToMe />
    </div>
  );
}
