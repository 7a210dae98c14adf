import { Link } from 'react-router';
import { useT } from '../../lib/i18n';
import { EmptyState } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { paths } from '../../lib/paths';

export function OnDemandPage() {
  const t = useT();
  return (
    <div className="page container">
      <PageHeader
        title={t('on_demand_title')}
        subtitle={t('on_demand_text')}
        actions={
          <Link className="button primary" to={paths.onDemand.placeOrder()}>
            <Icon name="plus" size={16} /> {t('place_an_order')}
          </Link>
        }
      />
      <EmptyState icon="demands" title={t('no_demands')} text={t('on_demand_text')} />
    </div>
  );
}
