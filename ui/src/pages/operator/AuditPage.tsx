// /operator/audit: every operator write, newest first: when, who, what and the detail as a
// sentence with amounts in coins.
import { fetchAudit } from '../../api/ops';
import { LoadMore } from '../../components/LoadMore';
import { AsyncItems, PageHeader } from '../../components/sections';
import { formatDateTime } from '../../lib/format';
import { useAsync } from '../../lib/useAsync';
import { actionLabel, auditSentence, useOpsT } from './operatorText';

export default function AuditPage() {
  const t = useOpsT();
  const state = useAsync((signal) => fetchAudit(0, signal), []);
  return (
    <div className="page operator-audit">
      <PageHeader title={t('operator_audit')} subtitle={t('operator_audit_hint')} />
      <AsyncItems state={state} emptyIcon="history" emptyTitle={t('operator_audit_empty')}>
        {(items) => (
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">{t('operator_audit_at')}</th>
                  <th scope="col">{t('operator_audit_who')}</th>
                  <th scope="col">{t('operator_audit_action')}</th>
                  <th scope="col">{t('operator_audit_target')}</th>
                  <th scope="col">{t('operator_audit_detail')}</th>
                </tr>
              </thead>
              <tbody>
                {items.map((e, i) => (
                  <tr key={`${e.at}-${i}`} data-action={e.action}>
                    <td>{formatDateTime(e.at)}</td>
                    <td>{e.operator === 'command line' ? t('operator_command_line') : e.operator}</td>
                    <td className="audit-action">{actionLabel(t, e.action)}</td>
                    <td>
                      <code>{e.target}</code>
                    </td>
                    {/* It quotes what operators typed (reasons, memos, field values) as typed: not the UI's words. */}
                    <td className="audit-detail" translate="no">
                      {auditSentence(t, e.action, e.detail as Record<string, unknown> | null)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </AsyncItems>
      <LoadMore state={state} fetchPage={(offset) => fetchAudit(offset)} />
    </div>
  );
}
