import { useState, type FormEvent } from 'react';
import { assignResource, fetchMembers, unassignResource } from '../../api/company';
import { errorText } from '../../api/client';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { ErrorNote, Field, PageHeader } from '../../components/ui';
import { toast, withLoading } from '../../stores/feedback';

export default function AllocatePage() {
  const t = useT();
  const members = useAsync((_signal) => fetchMembers(), []);
  const [userId, setUserId] = useState('');
  const [type, setType] = useState<'device' | 'app'>('device');
  const [resourceId, setResourceId] = useState('');
  const [error, setError] = useState<string | null>(null);
  const run = async (e: FormEvent, action: 'assign' | 'unassign') => {
    e.preventDefault();
    if (!userId || !resourceId.trim()) {
      setError(t('field_required'));
      return;
    }
    setError(null);
    try {
      const body = { user_id: userId, resource_type: type, resource_id: resourceId.trim() };
      await withLoading(() => (action === 'assign' ? assignResource(body) : unassignResource(body)));
      toast('success', action === 'assign' ? t('assigned') : t('unassigned'));
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <div className="page narrow">
      <PageHeader title={t('allocate')} />
      {members.error ? <ErrorNote text={members.error} onRetry={members.reload} /> : null}
      <form className="card form-card" onSubmit={(e) => void run(e, 'assign')} noValidate>
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
        <Field label={t('resource_id')} value={resourceId} onChange={(e) => setResourceId(e.target.value)} />
        {error ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="row-actions">
          <button type="submit" className="button primary">
            {t('assign')}
          </button>
          <button type="button" className="button ghost" onClick={(e) => void run(e, 'unassign')}>
            {t('unassign')}
          </button>
        </div>
      </form>
    </div>
  );
}
