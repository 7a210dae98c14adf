// /operator: the operator's console, its pages (people, audit). The market's figures come here
// with the overview (issue 25, item 4).
import { ListLink } from '../../components/ListLink';
import { PageHeader } from '../../components/sections';
import { paths } from '../../lib/paths';
import { useOpsT } from './operatorText';

export default function OperatorPage() {
  const t = useOpsT();
  return (
    <div className="page narrow operator-page">
      <PageHeader title={t('operator')} subtitle={t('operator_intro')} />
      <ul className="card operator-links">
        <li>
          <ListLink to={paths.console.operatorPeople()}>{t('operator_people')}</ListLink>
          <p className="muted">{t('operator_people_hint')}</p>
        </li>
        <li>
          <ListLink to={paths.console.operatorAudit()}>{t('operator_audit')}</ListLink>
          <p className="muted">{t('operator_audit_hint')}</p>
        </li>
        <li>
          <ListLink to={paths.console.operatorApps()}>{t('operator_apps')}</ListLink>
          <p className="muted">{t('operator_apps_hint')}</p>
        </li>
      </ul>
    </div>
  );
}
