import { fetchCompanyHistory } from '../../api/companies';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { AsyncItems, PageHeader } from '../../components/sections';
import { HistoryTable } from './HistoryTable';

/** /company/history: the current company's membership and allocation events (admins). */
export default function CompanyHistoryPage() {
  const t = useT();
  const state = useAsync((_signal) => fetchCompanyHistory(), []);
  return (
    <div className="page">
      <PageHeader title={t('company_history')} />
      <AsyncItems state={state} emptyIcon="history" emptyTitle={t('no_history')}>
        {(items) => <HistoryTable items={items} />}
      </AsyncItems>
    </div>
  );
}
