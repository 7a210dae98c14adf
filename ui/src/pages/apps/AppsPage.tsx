// /app: my installations (own and rented) with status chips, install progress, the actions the
// state allows and Open; polled while a transition is under way.
import { useCallback } from 'react';
import { Link } from 'react-router';
import { fetchInstallations } from '../../api/apps';
import type { Installation } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { AsyncItems, PageHeader } from '../../components/sections';
import { AllocatedToMe } from './AllocatedToMe';
import { AppIcon } from '../../components/apps/cards';
import { AppActions, AppBadges, AppProgress, AppStatusChip, usePollWhileBusy } from '../../components/apps/appStatus';
import { paths } from '../../lib/paths';
import { useSession } from '../../stores/session';

export default function AppsPage() {
  const t = useT();
  // A company member's menu is /app only (docs/product.md §2): no details or AI compute pages to link to.
  const member = useSession((s) => s.userType === 'member');
  const state = useAsync((signal) => fetchInstallations({ limit: 100 }, signal), []);
  const { setData } = state;
  const refresh = useCallback(() => {
    fetchInstallations({ limit: 100 })
      .then((d) => setData(() => d))
      .catch(() => {});
  }, [setData]);
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
            {member ? null : (
              <Link className="button ghost" to={paths.console.aiCompute()}>
                {t('ai_compute')}
              </Link>
            )}
            <Link className="button primary" to={paths.market.home()}>
              {t('explore_market')}
            </Link>
          </>
        }
      />
      <AsyncItems state={state} emptyIcon="/app" emptyTitle={t('apps_empty')}>
        {(items) => (
          <ul className="app-list">
            {items.map((i) => (
              <li key={i.id} className="app-row" data-installation={i.id} data-status={i.status}>
                <AppIcon app={{ icon_url: i.icon_url, name: i.app_name }} size={44} />
                <div className="app-row-main">
                  <div className="app-row-title">
                    {member ? <span>{i.app_name}</span> : <Link to={paths.console.appDetails(i.id)}>{i.app_name}</Link>}
                    <span className="tag">{i.kind === 'rent' ? t('kind_rent') : t('kind_own')}</span>
                  </div>
                  <div className="muted small-text">
                    {i.device_name || i.device_id}
                  </div>
                  {i.status_reason && i.device_online ? <div className="app-reason">{i.status_reason}</div> : null}
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
      <AllocatedToMe />
    </div>
  );
}
