// Membership and allocation events (who, what, when), newest first.
import type { HistoryEntry } from '../../api/types';
import { useT } from '../../lib/i18n';
import { formatDateTime } from '../../lib/format';
import type { MessageKey } from '../../i18n';

const ACTIONS: Record<string, MessageKey> = {
  company_created: 'hist_company_created',
  company_renamed: 'hist_company_renamed',
  company_deleted: 'hist_company_deleted',
  member_invited: 'hist_member_invited',
  invitation_accepted: 'hist_invitation_accepted',
  invitation_declined: 'hist_invitation_declined',
  member_applied: 'hist_member_applied',
  application_accepted: 'hist_application_accepted',
  application_declined: 'hist_application_declined',
  member_removed: 'hist_member_removed',
  member_left: 'hist_member_left',
  resource_assigned: 'hist_resource_assigned',
  resource_unassigned: 'hist_resource_unassigned',
};

export function HistoryTable({ items, showCompany }: { items: HistoryEntry[]; showCompany?: boolean }) {
  const t = useT();
  const subject = (h: HistoryEntry) => {
    if (h.subject_type === 'device') return `${t('res_device')} ${h.subject_id}`;
    if (h.subject_type === 'app') return `${t('res_app')} ${h.subject_id}`;
    if (h.subject_type === 'company') return h.subject_name;
    return h.subject_name;
  };
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">{t('time')}</th>
            {showCompany ? <th scope="col">{t('company_col')}</th> : null}
            <th scope="col">{t('actor')}</th>
            <th scope="col">{t('event')}</th>
            <th scope="col">{t('subject')}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((h) => (
            <tr key={h.id}>
              <td>{formatDateTime(h.created_at)}</td>
              {showCompany ? <td>{h.sme_name}</td> : null}
              <td>{h.actor_name}</td>
              <td>{ACTIONS[h.action] ? t(ACTIONS[h.action], { detail: h.detail }) : h.action}</td>
              <td>{subject(h)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
