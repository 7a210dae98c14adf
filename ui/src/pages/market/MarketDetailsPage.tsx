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
import { AppChips, AppIcon, priceText } from '../../components/apps';
import { resourceWords } from './catalogue';
import { InstallDialog } from '../../components/installDialog';
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
  const [installing, setInstalling] = useState(false);
  // Back from sign-in with ?install=1: the same choice opens again.
  const wantsInstall = params.get('install') === '1';
  useEffect(() => {
    if (wantsInstall && signedIn && app) setInstalling(true);
  }, [wantsInstall, signedIn, app]);
  const startInstall = () => {
    if (signedIn) setInstalling(true);
    else navigate(paths.auth.signIn(`${paths.market.details(id)}&install=1`));
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
              <span className="price large">{priceText(t, app.price_per_hour)}</span>
              {!p.mobile ? (
                <button type="button" className="button primary" onClick={startInstall}>
                  {t('install')}
                </button>
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
            <h2>{t('description')}</h2>
            <p className="prose">{app.description || app.summary}</p>
          </section>
          <InstallDialog app={app} open={installing} onClose={() => setInstalling(false)} />
        </article>
      )}
    </div>
  );
}
