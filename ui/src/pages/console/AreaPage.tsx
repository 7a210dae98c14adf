// The page of a menu entry whose `component` this bundle does not know (a server newer than the UI;
// every console path of lib/paths.ts has its own page in app/routes.tsx): a titled page with an
// honest empty state, so the menu, guard and layout still work.
import { Link, useLocation } from 'react-router';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { EmptyState } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { consoleTitleKey, paths } from '../../lib/paths';

export default function AreaPage() {
  const t = useT();
  const boot = useBoot();
  const { pathname } = useLocation();
  const key = consoleTitleKey(pathname);
  return (
    <div className="page">
      <PageHeader title={key ? t(key) : pathname} />
      <EmptyState
        icon={pathname}
        title={t('area_empty')}
        text={t('area_empty_hint', { product: boot.productName })}
        action={
          pathname.startsWith(paths.console.app.pattern) ? (
            <Link className="button primary" to={paths.market.home()}>
              {t('explore_market')}
            </Link>
          ) : undefined
        }
      />
    </div>
  );
}
