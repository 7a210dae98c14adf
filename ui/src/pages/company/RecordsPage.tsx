import { useLocation } from 'react-router';
import { answerMemberRecord, fetchMemberRecords } from '../../api/company';
import { errorText } from '../../api/client';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { EmptyState, ErrorNote, PageHeader, SkeletonLines } from '../../components/ui';
import { formatDateTime } from '../../format';
import { toast, withLoading } from '../../stores/feedback';
import type { MessageKey } from '../../i18n';

const STATUS: Record<string, MessageKey> = {
  pending: 'rec_pending',
  invited: 'rec_invited',
  accepted: 'rec_accepted',
  expired: 'rec_expired',
  applied: 'rec_applied',
  waiting: 'rec_waiting',
  declined: 'rec_declined',
};

/** Invitations and applications (/company/history for admins, /history for individual users). */
export default function RecordsPage() {
  const t = useT();
  const { pathname } = useLocation();
  const state = useAsync((_signal) => fetchMemberRecords(), []);
  const answer = async (id: string, a: 'accept' | 'decline') => {
    try {
      await withLoading(() => answerMemberRecord(id, a));
      state.reload();
    } catch (err) {
      toast('error', errorText(err));
    }
  };
  const items = state.data?.items ?? [];
  return (
    <div className="page">
      <PageHeader title={pathname === '/history' ? t('my_company_history') : t('company_history')} subtitle={t('records')} />
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('type')}</th>
                <th scope="col">{t('email')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('joined_at')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('accept')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((r) => (
                <tr key={r.id}>
                  <td>{r.kind === 'invite' ? t('kind_invite') : t('kind_apply')}</td>
                  <td>{r.email}</td>
                  <td>{STATUS[r.status] ? t(STATUS[r.status]) : r.status}</td>
                  <td>{formatDateTime(r.created_at)}</td>
                  <td className="row-actions">
                    {r.status === 'pending' || r.status === 'waiting' || r.status === 'invited' ? (
                      <>
                        <button type="button" className="button primary small" onClick={() => void answer(r.id, 'accept')}>
                          {t('accept')}
                        </button>
                        <button type="button" className="button ghost small" onClick={() => void answer(r.id, 'decline')}>
                          {t('decline')}
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : !state.error ? (
        <EmptyState icon="history" title={t('no_records')} />
      ) : null}
    </div>
  );
}
