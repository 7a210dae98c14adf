// Invitations and applications, as the caller sees them (API.md: an admin sees applications as
// "waiting", the applicant as "applied"), with accept/decline where the caller may answer.
import { answerMemberRecord } from '../../api/company';
import { errorText } from '../../api/client';
import type { MemberRecord } from '../../api/types';
import { useT } from '../../app/i18n';
import { formatDateTime } from '../../format';
import type { MessageKey } from '../../i18n';
import { toast, withLoading } from '../../stores/feedback';

export const RECORD_STATUS: Record<string, MessageKey> = {
  pending: 'rec_pending',
  invited: 'rec_invited',
  accepted: 'rec_accepted',
  expired: 'rec_expired',
  applied: 'rec_applied',
  waiting: 'rec_waiting',
  declined: 'rec_declined',
};

export function RecordsTable({
  items,
  showCompany,
  onAnswered,
}: {
  items: MemberRecord[];
  /** The person's view: which company each record is about. */
  showCompany?: boolean;
  onAnswered: (record: MemberRecord, answer: 'accept' | 'decline') => void;
}) {
  const t = useT();
  const answer = async (r: MemberRecord, a: 'accept' | 'decline') => {
    try {
      const updated = await withLoading(() => answerMemberRecord(r.id, a));
      toast('success', a === 'accept' ? t('accepted_toast') : t('declined_toast'));
      onAnswered(updated, a);
    } catch (err) {
      toast('error', errorText(err));
    }
  };
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">{t('type')}</th>
            {showCompany ? <th scope="col">{t('company_col')}</th> : null}
            <th scope="col">{t('email')}</th>
            <th scope="col">{t('status')}</th>
            <th scope="col">{t('created_at')}</th>
            <th scope="col">
              <span className="visually-hidden">{t('accept')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((r) => (
            <tr key={r.id} data-record={r.id}>
              <td>{r.kind === 'invite' ? t('kind_invite') : t('kind_apply')}</td>
              {showCompany ? <td>{r.sme_name || r.sme_id}</td> : null}
              <td>
                {r.email}
                {r.name && r.name !== r.email ? <span className="muted"> ({r.name})</span> : null}
              </td>
              <td>
                <span className={`status-pill status-${r.status}`}>{RECORD_STATUS[r.status] ? t(RECORD_STATUS[r.status]) : r.status}</span>
              </td>
              <td>{formatDateTime(r.created_at)}</td>
              <td className="row-actions">
                {r.actionable ? (
                  <>
                    <button type="button" className="button primary small" onClick={() => void answer(r, 'accept')}>
                      {t('accept')}
                    </button>
                    <button type="button" className="button ghost small" onClick={() => void answer(r, 'decline')}>
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
  );
}
