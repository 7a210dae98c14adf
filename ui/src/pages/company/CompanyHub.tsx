// The person's side of companies: create one, apply to one by its id, answer invitations, see
// one's applications, switch into or leave one's companies. Shown on /company-email (also from a
// phone) and on /history.
import { useState, type FormEvent } from 'react';
import { applyToCompany, createCompany, fetchMemberRecords, leaveCompany } from '../../api/company';
import { errorText } from '../../api/client';
import { PERSONAL_SME_ID } from '../../constants';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { reloadOrganizations, switchCompany } from '../../app/session';
import { ConfirmDialog } from '../../components/Dialog';
import { EmptyState, ErrorNote, Field, SkeletonLines } from '../../components/ui';
import { toast, withLoading } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import type { Organization } from '../../api/types';
import { validateCompanyName } from '../auth/validation';
import { RecordsTable } from './RecordsTable';

export function CreateCompanyForm() {
  const t = useT();
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = validateCompanyName(name);
    setError(key ? t(key) : undefined);
    if (key) return;
    try {
      const company = await withLoading(() => createCompany(name.trim()));
      toast('success', t('company_created'));
      await withLoading(() => switchCompany(company.id));
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form className="card form-card" onSubmit={submit} noValidate aria-labelledby="create-company-title">
      <h2 id="create-company-title">{t('create_company')}</h2>
      <Field label={t('company_name')} value={name} onChange={(e) => setName(e.target.value)} error={error} maxLength={50} />
      <button type="submit" className="button primary">
        {t('create')}
      </button>
    </form>
  );
}

export function ApplyForm({ onApplied }: { onApplied: () => void }) {
  const t = useT();
  const [id, setId] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!id.trim()) {
      setError(t('company_id_required'));
      return;
    }
    setError(undefined);
    try {
      await withLoading(() => applyToCompany(id.trim()));
      toast('success', t('applied_toast'));
      setId('');
      onApplied();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form className="card form-card" onSubmit={submit} noValidate aria-labelledby="apply-title">
      <h2 id="apply-title">{t('apply_to_company')}</h2>
      <Field label={t('company_id')} value={id} onChange={(e) => setId(e.target.value)} error={error} hint={t('apply_hint')} />
      <button type="submit" className="button primary">
        {t('apply')}
      </button>
    </form>
  );
}

export function MyCompanies() {
  const t = useT();
  const orgs = useSession((s) => s.organizationList).filter((o) => o.id !== PERSONAL_SME_ID);
  const smeId = useSession((s) => s.smeId);
  const [leaving, setLeaving] = useState<Organization | null>(null);
  const leave = async () => {
    const org = leaving;
    setLeaving(null);
    if (!org) return;
    try {
      await withLoading(() => leaveCompany(org.id));
      toast('success', t('left_company'));
      if (org.id === smeId) await withLoading(() => switchCompany(PERSONAL_SME_ID));
      else await reloadOrganizations();
    } catch (err) {
      toast('error', errorText(err));
    }
  };
  return (
    <section className="card" aria-labelledby="my-companies-title">
      <h2 id="my-companies-title">{t('my_companies')}</h2>
      {orgs.length === 0 ? (
        <p className="muted">{t('no_companies')}</p>
      ) : (
        <ul className="company-list">
          {orgs.map((o) => (
            <li key={o.id} className="list-row">
              <span>
                <strong>{o.name}</strong>
                <br />
                <code className="muted small-text">{o.id}</code>
              </span>
              <span className="row-actions">
                {o.id !== smeId ? (
                  <button type="button" className="button primary small" onClick={() => void withLoading(() => switchCompany(o.id)).catch((err) => toast('error', errorText(err)))}>
                    {t('switch_to')}
                  </button>
                ) : null}
                <button type="button" className="button ghost small" onClick={() => setLeaving(o)}>
                  {t('leave')}
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog
        open={leaving !== null}
        title={t('leave')}
        text={t('confirm_leave', { name: leaving?.name ?? '' })}
        confirmLabel={t('leave')}
        danger
        onConfirm={() => void leave()}
        onClose={() => setLeaving(null)}
      />
    </section>
  );
}

/** The caller's own invitations and applications. */
export function MyRecords({ nonce = 0 }: { nonce?: number }) {
  const t = useT();
  const state = useAsync((_signal) => fetchMemberRecords('mine'), [nonce]);
  const items = state.data?.items ?? [];
  return (
    <section aria-labelledby="my-records-title">
      <h2 id="my-records-title">{t('my_records')}</h2>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        <RecordsTable
          items={items}
          showCompany
          onAnswered={(_r, a) => {
            state.reload();
            if (a === 'accept') void reloadOrganizations().catch(() => undefined);
          }}
        />
      ) : !state.error ? (
        <EmptyState icon="company" title={t('no_records')} />
      ) : null}
    </section>
  );
}

export function CompanyHub() {
  const [nonce, setNonce] = useState(0);
  return (
    <div className="stack">
      <MyRecords nonce={nonce} />
      <div className="grid-2">
        <ApplyForm onApplied={() => setNonce((n) => n + 1)} />
        <CreateCompanyForm />
      </div>
      <MyCompanies />
    </div>
  );
}
