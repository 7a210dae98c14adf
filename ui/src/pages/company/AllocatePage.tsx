import { useState, type FormEvent } from 'react';
import { assignResource, fetchAssignments, fetchMembers, unassignResource, type AssignBody } from '../../api/company';
import { errorText } from '../../api/client';
import { fetchDevices } from '../../api/devices';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { EmptyState, ErrorNote, Field, PageHeader, SkeletonLines } from '../../components/ui';
import { formatDateTime } from '../../format';
import { toast, withLoading } from '../../stores/feedback';

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
  const [error, setError] = useState<string | null>(null);
  const assign = async (e: FormEvent) => {
    e.preventDefault();
    if (!userId || !resourceId.trim()) {
      setError(t('field_required'));
      return;
    }
    setError(null);
    try {
      await withLoading(() => assignResource({ user_id: userId, resource_type: type, resource_id: resourceId.trim() }));
      toast('success', t('assigned'));
      setResourceId('');
      assignments.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const unassign = async (body: AssignBody) => {
    try {
      await withLoading(() => unassignResource(body));
      toast('success', t('unassigned'));
      assignments.reload();
    } catch (err) {
      toast('error', errorText(err));
    }
  };
  const items = assignments.data?.items ?? [];
  return (
    <div className="page">
      <PageHeader title={t('allocate')} />
      {members.error ? <ErrorNote text={members.error} onRetry={members.reload} /> : null}
      <form className="card form-card" onSubmit={(e) => void assign(e)} noValidate>
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
          <div className="field">
            <label htmlFor="alloc-type">{t('resource_type')}</label>
            <select id="alloc-type" value={type} onChange={(e) => setType(e.target.value as 'device' | 'app')}>
              <option value="device">{t('res_device')}</option>
              <option value="app">{t('res_app')}</option>
            </select>
          </div>
          <Field
            label={t('resource_id')}
            value={resourceId}
            onChange={(e) => setResourceId(e.target.value)}
            hint={t('resource_id_hint')}
            list={type === 'device' ? 'alloc-devices' : undefined}
            autoComplete="off"
          />
          <datalist id="alloc-devices">
            {(devices.data?.items ?? []).map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </datalist>
        </div>
        {error ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="row-actions">
          <button type="submit" className="button primary">
            {t('assign')}
          </button>
        </div>
      </form>
      <h2>{t('assignments')}</h2>
      {assignments.error ? <ErrorNote text={assignments.error} onRetry={assignments.reload} /> : null}
      {assignments.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('member')}</th>
                <th scope="col">{t('resource_type')}</th>
                <th scope="col">{t('resource_id')}</th>
                <th scope="col">{t('assigned_at')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('unassign')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={`${a.user_id}/${a.resource_type}/${a.resource_id}`}>
                  <td>
                    {a.user_name} <span className="muted">({a.user_email})</span>
                  </td>
                  <td>{a.resource_type === 'device' ? t('res_device') : t('res_app')}</td>
                  <td>
                    <code>{a.resource_id}</code>
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
            </tbody>
          </table>
        </div>
      ) : !assignments.error ? (
        <EmptyState icon="devices" title={t('no_assignments')} />
      ) : null}
    </div>
  );
}
