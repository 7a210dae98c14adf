// What a phone can do next on a page that would otherwise offer sign-in (issue 26): phones stay on
// the /m/ pages (docs/product.md §2), so a sign-in link would bounce to the mobile market. Says so, and
// offers the two places a phone can go: the download page and the market.
import { Link } from 'react-router';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useBoot } from '../../stores/boot';

export function PhoneNextSteps() {
  const t = useT();
  const boot = useBoot();
  return (
    <div className="phone-next" data-phone-next="">
      <p>{t('phone_account_on_computer', { product: boot.productName })}</p>
      <p className="phone-next-links">
        <Link className="button primary" to={paths.download()}>
          {t('phone_get_app')}
        </Link>
        <Link className="button ghost" to={paths.mobile.market()}>
          {t('explore_market')}
        </Link>
      </p>
    </div>
  );
}
