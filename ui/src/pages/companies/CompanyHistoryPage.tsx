import { fetchCompanyHistory } from '../../api/companies';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { HistoryTable } from './HistoryTable';

/** /company/history: the current company's membership and allocation events (admins). */
export default function CompanyHistoryPage() {
  const t = useT();
  const state = useAsync((_signal) => fetchCompanyHistory(), []);
  const items = state.data?.items ?? [];
  return (
    <div className="page">
      <PageHeader title={t('company_history')} />
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        <HistoryTable items={items} />
      ) : !state.error ? (
        <EmptyState icon="history" title={t('no_history')} />
      ) : null}
    </div>
  );
}
