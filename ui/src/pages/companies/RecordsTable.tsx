// Invitations and applications, as the caller sees them (docs/api.md: an admin sees applications as
// "waiting", the applicant as "applied"), with accept/decline where the caller may answer.
import { answerMemberRecord, fetchMemberRecords } from '../../api/companies';
import type { MemberRecord } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { formatDateTime } from '../../lib/format';
import type { MessageKey } from '../../i18n';
import { toast, withLoading } from '../../stores/feedback';
import { ActionTable, AsyncItems, Section } from '../../components/sections';
import { toastFailure } from '../../stores/feedback';

const RECORD_STATUS: Record<string, MessageKey> = {
  pending: 'rec_pending',
  invited: 'rec_invited',
  accepted: 'rec_accepted',
  expired: 'rec_expired',
  applied: 'rec_applied',
  waiting: 'rec_waiting',
  declined: 'rec_declined',
};

type Answer = 'accept' | 'decline';

export function RecordsTable({
  items,
  showCompany,
  onAnswered,
}: {
  items: MemberRecord[];
  /** The person's view: which company each record is about. */
  showCompany?: boolean;
  onAnswered: (record: MemberRecord, answer: Answer) => void;
}) {
  const t = useT();
  const answer = (r: MemberRecord, a: Answer) =>
    toastFailure(async () => {
      const updated = await withLoading(() => answerMemberRecord(r.id, a));
      toast('success', a === 'accept' ? t('accepted_toast') : t('declined_toast'));
      onAnswered(updated, a);
    });
  return (
    <ActionTable columns={[t('type'), showCompany ? t('company_col') : false, t('email'), t('status'), t('created_at')]} actionLabel={t('accept')}>
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
    </ActionTable>
  );
}

/**
 * A section listing member records: the company's (an admin's view) or, with `scope` "mine", the
 * caller's own. Reloaded when `nonce` changes and after each answer.
 */
export function RecordsSection({
  id,
  title,
  scope,
  showCompany,
  emptyIcon,
  nonce,
  onAnswered,
}: {
  id: string;
  title: string;
  scope?: 'mine';
  showCompany?: boolean;
  emptyIcon: string;
  nonce: number;
  onAnswered?: (record: MemberRecord, answer: Answer) => void;
}) {
  const t = useT();
  const state = useAsync((_signal) => fetchMemberRecords(scope), [nonce]);
  return (
    <Section id={id} title={title}>
      <AsyncItems state={state} emptyIcon={emptyIcon} emptyTitle={t('no_records')}>
        {(items) => (
          <RecordsTable
            items={items}
            showCompany={showCompany}
            onAnswered={(r, a) => {
              state.reload();
              onAnswered?.(r, a);
            }}
          />
        )}
      </AsyncItems>
    </Section>
  );
}
