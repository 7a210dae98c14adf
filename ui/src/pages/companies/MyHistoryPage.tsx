import { useState } from 'react';
import { fetchMyHistory } from '../../api/companies';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { AsyncItems, PageHeader } from '../../components/sections';
import { ApplyForm, CreateCompanyForm, MyCompanies, MyRecords } from './CompanyHub';
import { HistoryTable } from './HistoryTable';

/** /history: the person's companies, invitations, applications and the events of their companies. */
export default function MyHistoryPage() {
  const t = useT();
  const [nonce, setNonce] = useState(0);
  const state = useAsync((_signal) => fetchMyHistory(), [nonce]);
  return (
    <div className="page">
      <PageHeader title={t('my_company_history')} subtitle={t('companies_intro')} />
      <div className="stack">
        <MyCompanies />
        <MyRecords nonce={nonce} />
        <div className="grid-2">
          <ApplyForm onApplied={() => setNonce((n) => n + 1)} />
          <CreateCompanyForm />
        </div>
        <section aria-labelledby="events-title">
          <h2 id="events-title">{t('history_events')}</h2>
          <AsyncItems state={state} emptyIcon="history" emptyTitle={t('no_history')}>
            {(items) => <HistoryTable items={items} showCompany />}
          </AsyncItems>
        </section>
      </div>
    </div>
  );
}
