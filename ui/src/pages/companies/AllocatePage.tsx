import { useState } from 'react';
import { assignResource, fetchAssignments, fetchMembers, unassignResource } from '../../api/companies';
import type { AssignBody } from '../../api/types';
import { fetchDevices } from '../../api/devices';
import { fetchApplications } from '../../api/market';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { ErrorNote } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { formatDateTime } from '../../lib/format';
import { toast, withLoading } from '../../stores/feedback';
import { ActionTable, AsyncItems } from '../../components/sections';
import { SelectField } from '../../components/fields';
import { toastFailure } from '../../stores/feedback';
import { FormError, SubmitButton, useForm } from '../../components/form';

/** /company/allocate: give a company device or app to a member, or take it back. */
export default function AllocatePage() {
  const t = useT();
  const members = useAsync((_signal) => fetchMembers(), []);
  const assignments = useAsync((_signal) => fetchAssignments(), []);
  // The company's devices (an admin's device list in the company context), offered as choices.
  const devices = useAsync((signal) => fetchDevices({}, signal), []);
  const [userId, setUserId] = useState('');
  const [type, setType] = useState<'device' | 'app'>('device');
  const [resourceId, setResourceId] = useState('');
  // The market's apps, offered by name (issue 26: an id or slug had to be typed).
  const apps = useAsync((signal) => fetchApplications({ limit: 100 }, signal), []);
  const choices: [string, string][] =
    type === 'device'
      ? (devices.data?.items ?? []).map((d) => [d.id, `${d.name} · ${d.id}`])
      : (apps.data?.items ?? []).map((a) => [a.id, a.name]);
  const form = useForm({
    validate: () => ({ form: !userId || !resourceId.trim() ? 'field_required' : null }),
    action: async () => {
      await withLoading(() => assignResource({ user_id: userId, resource_type: type, resource_id: resourceId.trim() }));
      toast('success', t('assigned'));
      setResourceId('');
      assignments.reload();
    },
  });
  const unassign = (body: AssignBody) =>
    toastFailure(async () => {
      await withLoading(() => unassignResource(body));
      toast('success', t('unassigned'));
      assignments.reload();
    });
  return (
    <div className="page">
      <PageHeader title={t('allocate')} />
      {members.error ? <ErrorNote text={members.error} onRetry={members.reload} /> : null}
      <form className="card form-card" onSubmit={form.submit} noValidate>
        <div className="form-row">
          <div className="field">
            <label htmlFor="alloc-member">{t('member')}</label>
            <select id="alloc-member" value={userId} onChange={(e) => setUserId(e.target.value)}>
              <option value="">-</option>
              {(members.data?.items ?? []).map((m) => (
                <option key={m.user_id} value={m.user_id}>
                  {m.name} ({m.email})
                </option>
              ))}
            </select>
          </div>
          <SelectField
            id="alloc-type"
            label={t('resource_type')}
            value={type}
            options={[
              ['device', t('res_device')],
              ['app', t('res_app')],
            ]}
            onChange={(v) => {
              setType(v);
              setResourceId('');
            }}
          />
          <SelectField id="alloc-resource" label={t('resource')} value={resourceId} options={[['', '-'], ...choices]} onChange={setResourceId} />
        </div>
        <FormError form={form} />
        <div className="row-actions">
          <SubmitButton form={form}>{t('assign')}</SubmitButton>
        </div>
      </form>
      <h2>{t('assignments')}</h2>
      <AsyncItems state={assignments} emptyIcon="devices" emptyTitle={t('no_assignments')}>
        {(items) => (
          <ActionTable columns={[t('member'), t('resource_type'), t('resource'), t('assigned_at')]} actionLabel={t('unassign')}>
            {items.map((a) => (
              <tr key={`${a.user_id}/${a.resource_type}/${a.resource_id}`}>
                <td>
                  {a.user_name} <span className="muted">({a.user_email})</span>
                </td>
                <td>{a.resource_type === 'device' ? t('res_device') : t('res_app')}</td>
                <td>
                  {a.resource_name ? `${a.resource_name} ` : null}
                  <code className="muted">{a.resource_id}</code>
                </td>
                <td>{formatDateTime(a.assigned_at)}</td>
                <td>
                  <button
                    type="button"
                    className="button ghost small"
                    onClick={() => void unassign({ user_id: a.user_id, resource_type: a.resource_type, resource_id: a.resource_id })}
                  >
                    {t('unassign')}
                  </button>
                </td>
              </tr>
            ))}
          </ActionTable>
        )}
      </AsyncItems>
    </div>
  );
}
