import { useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { fetchApplication } from '../../api/market';
import { useAsync } from '../../lib/useAsync';
import { useInitialData, useInitialNotFound } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { Icon } from '../../components/Icon';
import { describeResources } from '../../lib/format';
import { paths, usePublicPaths } from '../../lib/paths';
import { ErrorPage } from '../../components/ErrorPage';
import { AppChips, AppIcon, offersText } from '../../components/apps/cards';
import { formatCoins } from '../../lib/format';
import { resourceWords } from './catalogue';
import { InstallDialog, NoPermissionDialog } from './installDialog';
import { RentDialog } from './rentDialog';
import { groupNames } from '../../components/devices/deviceStatus';
import { useSession } from '../../stores/session';

export function MarketDetailsPage() {
  const t = useT();
  const p = usePublicPaths();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const initial = useInitialData('marketDetails');
  const initialNotFound = useInitialNotFound();
  const state = useAsync(id && !initialNotFound ? (signal) => fetchApplication(id, signal) : null, [id], initial);
  const app = state.data;
  const navigate = useNavigate();
  const signedIn = useSession((s) => Boolean(s.token));
  const member = useSession((s) => s.userType === 'member');
  const [dialog, setDialog] = useState<'install' | 'rent' | null>(null);
  // Back from sign-in with ?do=install|rent: the same choice opens again.
  const wants = params.get('do');
  // ?device=: the box to rent on (from its nearby page).
  const preferred = params.get('device') ?? undefined;
  useEffect(() => {
    if ((wants === 'install' || wants === 'rent') && signedIn && app) setDialog(wants);
  }, [wants, signedIn, app]);
  const start = (what: 'install' | 'rent') => {
    if (signedIn) setDialog(what);
    else navigate(paths.auth.signIn(`${paths.market.details(id)}&do=${what}`));
  };
  if (initialNotFound || !id || (state.errorCode === 404 && !app)) {
    return <ErrorPage code={404} />;
  }

  return (
    <div className="page container narrow">
      <Link to={p.market()} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !app ? (
        <SkeletonLines lines={6} />
      ) : !app ? (
        !state.error ? <EmptyState icon="market" title={t('app_not_found')} /> : null
      ) : (
        <article className="details">
          <header className="details-head">
            <AppIcon app={app} size={72} />
            <div>
              <h1>{app.name}</h1>
              <p className="muted">{app.summary}</p>
              <AppChips app={app} />
            </div>
            <div className="details-cta">
              <span className="price large" data-testid="app-price">
                {offersText(t, app.price_per_hour)}
              </span>
              {!p.mobile ? (
                <span className="details-buttons">
                  <button type="button" className="button primary" onClick={() => start('install')}>
                    {t('install')}
                  </button>
                  <button type="button" className="button ghost" onClick={() => start('rent')}>
                    {t('rent')}
                  </button>
                </span>
              ) : (
                <Link className="button primary" to={paths.download()}>
                  {t('get_client')}
                </Link>
              )}
            </div>
          </header>
          <dl className="facts">
            <div>
              <dt>{t('publisher')}</dt>
              <dd>{app.publisher || '-'}</dd>
            </div>
            <div>
              <dt>{t('version')}</dt>
              <dd>{app.version || '-'}</dd>
            </div>
            <div>
              <dt>{t('requirements')}</dt>
              <dd>{app.requirements ? describeResources(app.requirements, resourceWords(t)) : '-'}</dd>
            </div>
          </dl>
          <section>
            <h2>{t('offers_title')}</h2>
            {app.offers.length ? (
              <ul className="offer-list" data-testid="offers">
                {app.offers.map((o) => (
                  <li key={o.device_id} className="offer">
                    <span className="offer-device">{o.device_name}</span>
                    <span className="muted small">{o.gpus.length ? groupNames(o.gpus) : t('offer_no_gpu')}</span>
                    <span className="price">{`${formatCoins(o.price_per_hour)} ${t('coins')} ${t('per_hour')}`}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">{t('offers_none')}</p>
            )}
          </section>
          <section>
            <h2>{t('description')}</h2>
            <p className="prose">{app.description || app.summary}</p>
          </section>
          {member ? (
            <NoPermissionDialog
              title={t(dialog === 'rent' ? 'rent_app_title' : 'install_app_title', { name: app.name })}
              open={dialog !== null}
              onClose={() => setDialog(null)}
            />
          ) : (
            <>
              <InstallDialog app={app} open={dialog === 'install'} onClose={() => setDialog(null)} />
              <RentDialog app={app} open={dialog === 'rent'} onClose={() => setDialog(null)} preferred={preferred} />
            </>
          )}
        </article>
      )}
    </div>
  );
}
