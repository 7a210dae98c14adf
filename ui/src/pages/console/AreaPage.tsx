// Signed-in areas whose calls are not specified yet (SPEC.md §2 "content not shown"): a titled page
// with an honest empty state, so the menu, guard and layout work end to end.
import { Link, useLocation } from 'react-router';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { consoleTitleKey } from '../../app/consolePages';
import { EmptyState, PageHeader } from '../../components/ui';
import { paths } from '../../lib/paths';

const ICONS: Record<string, string> = {
  '/app': 'app',
  '/app/details': 'app',
  '/app/aicompute': 'cpu',
  '/friends': 'friends',
  '/friends/tags': 'friends',
  '/wallet': 'wallet',
  '/messages': 'messages',
  '/demands-and-offers': 'demands',
};

export default function AreaPage() {
  const t = useT();
  const boot = useBoot();
  const { pathname } = useLocation();
  const key = consoleTitleKey(pathname);
  return (
    <div className="page">
      <PageHeader title={key ? t(key) : pathname} />
      <EmptyState
        icon={ICONS[pathname] ?? 'app'}
        title={t('area_empty')}
        text={t('area_empty_hint', { product: boot.productName })}
        action={
          pathname.startsWith('/app') ? (
            <Link className="button primary" to={paths.market.home}>
              {t('explore_market')}
            </Link>
          ) : undefined
        }
      />
    </div>
  );
}
