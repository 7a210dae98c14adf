import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import {
  deleteCompany,
  fetchMemberRecords,
  fetchMembers,
  inviteMember,
  removeMember,
  updateCompany,
} from '../../api/company';
import { errorText } from '../../api/client';
import { PERSONAL_SME_ID } from '../../constants';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { leaveDeletedCompany, reloadOrganizations } from '../../app/session';
import { ConfirmDialog } from '../../components/Dialog';
import { EmptyState, ErrorNote, Field, PageHeader, SkeletonLines } from '../../components/ui';
import { formatDate } from '../../format';
import { paths } from '../../paths';
import { toast, withLoading } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import type { Member } from '../../api/types';
import { validateCompanyName, validateEmail } from '../auth/validation';
import { CompanyHub } from './CompanyHub';
import { RecordsTable } from './RecordsTable';

function Rename({ current }: { current: string }) {
  const t = useT();
  const [name, setName] = useState(current);
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = validateCompanyName(name);
    setError(key ? t(key) : undefined);
    if (key) return;
    try {
      await withLoading(() => updateCompany(name.trim()));
      await reloadOrganizations();
      toast('success', t('renamed'));
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form className="card form-card" onSubmit={submit} noValidate aria-labelledby="rename-title">
      <h2 id="rename-title">{t('rename_company')}</h2>
      <Field label={t('company_name')} value={name} onChange={(e) => setName(e.target.value)} error={error} maxLength={50} />
      <button type="submit" className="button primary">
        {t('rename')}
      </button>
    </form>
  );
}

function Invite({ onInvited }: { onInvited: () => void }) {
  const t = useT();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'admin'>('member');
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = validateEmail(email);
    setError(key ? t(key) : undefined);
    if (key) return;
    try {
      await withLoading(() => inviteMember(email.trim(), role));
      toast('success', t('invited'));
      setEmail('');
      onInvited();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form className="card form-card" onSubmit={submit} noValidate aria-labelledby="invite-title">
      <h2 id="invite-title">{t('invite_member')}</h2>
      <Field label={t('email')} type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={error} />
      <div className="field">
        <label htmlFor="invite-role">{t('invite_as')}</label>
        <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as 'member' | 'admin')}>
          <option value="member">{t('role_member')}</option>
          <option value="admin">{t('role_admin')}</option>
        </select>
      </div>
      <button type="submit" className="button primary">
        {t('invite')}
      </button>
    </form>
  );
}

function Records({ nonce, onChanged }: { nonce: number; onChanged: () => void }) {
  const t = useT();
  const state = useAsync((_signal) => fetchMemberRecords(), [nonce]);
  const items = state.data?.items ?? [];
  return (
    <section aria-labelledby="records-title">
      <h2 id="records-title">{t('company_records')}</h2>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        <RecordsTable
          items={items}
          onAnswered={() => {
            state.reload();
            onChanged();
          }}
        />
      ) : !state.error ? (
        <EmptyState icon="history" title={t('no_records')} />
      ) : null}
    </section>
  );
}

function Members({ nonce }: { nonce: number }) {
  const t = useT();
  const me = useSession((s) => s.userInfo.email);
  const state = useAsync((_signal) => fetchMembers(), [nonce]);
  const [removing, setRemoving] = useState<Member | null>(null);
  const remove = async () => {
    const m = removing;
    setRemoving(null);
    if (!m) return;
    try {
      await withLoading(() => removeMember(m.user_id));
      state.reload();
    } catch (err) {
      toast('error', errorText(err));
    }
  };
  const items = state.data?.items ?? [];
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">{t('members')}</h2>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('name')}</th>
                <th scope="col">{t('email')}</th>
                <th scope="col">{t('role')}</th>
                <th scope="col">{t('joined_at')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('remove')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((m) => (
                <tr key={m.user_id}>
                  <td>
                    {m.name}
                    {m.owner ? <span className="tag">{t('owner_badge')}</span> : null}
                    {m.email === me ? <span className="tag">{t('you_badge')}</span> : null}
                  </td>
                  <td>{m.email}</td>
                  <td>{m.role === 'admin' ? t('role_admin') : t('role_member')}</td>
                  <td>{formatDate(m.joined_at)}</td>
                  <td>
                    {m.email !== me ? (
                      <button type="button" className="button ghost small" onClick={() => setRemoving(m)} aria-label={`${t('remove')} ${m.email}`}>
                        {t('remove')}
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : !state.error ? (
        <EmptyState icon="friends" title={t('no_members')} />
      ) : null}
      <ConfirmDialog
        open={removing !== null}
        title={t('remove')}
        text={`${t('remove')} ${removing?.email ?? ''}?`}
        confirmLabel={t('remove')}
        danger
        onConfirm={() => void remove()}
        onClose={() => setRemoving(null)}
      />
    </section>
  );
}

function DeleteCompany({ name }: { name: string }) {
  const t = useT();
  const [open, setOpen] = useState(false);
  const run = async () => {
    setOpen(false);
    try {
      await withLoading(async () => {
        await deleteCompany();
        await leaveDeletedCompany();
      });
      toast('success', t('company_deleted'));
    } catch (err) {
      toast('error', errorText(err));
    }
  };
  return (
    <section className="card danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">{t('delete_company')}</h2>
      <p className="muted">{t('delete_company_text')}</p>
      <button type="button" className="button danger" onClick={() => setOpen(true)}>
        {t('delete_company')}
      </button>
      <ConfirmDialog
        open={open}
        title={t('delete_company')}
        text={t('confirm_delete_company', { name })}
        confirmLabel={t('delete_company')}
        danger
        onConfirm={() => void run()}
        onClose={() => setOpen(false)}
      />
    </section>
  );
}

function AdminCompany({ id, name }: { id: string; name: string }) {
  const t = useT();
  const [nonce, setNonce] = useState(0);
  const bump = () => setNonce((n) => n + 1);
  return (
    <div className="stack">
      <div className="card company-id-row">
        <span className="muted">{t('company_id')}:</span>
        <code data-testid="company-id">{id}</code>
        <span className="field-hint">{t('share_company_id')}</span>
      </div>
      <div className="grid-2">
        <Invite onInvited={bump} />
        <Rename key={name} current={name} />
      </div>
      <Records nonce={nonce} onChanged={bump} />
      <Members nonce={nonce} />
      <DeleteCompany name={name} />
    </div>
  );
}

/** /company: an admin manages the current company; outside one, the person's company hub. */
export default function CompanyPage() {
  const t = useT();
  const smeId = useSession((s) => s.smeId);
  const userType = useSession((s) => s.userType);
  const orgs = useSession((s) => s.organizationList);
  const current = orgs.find((o) => o.id === smeId);
  const inCompany = smeId !== PERSONAL_SME_ID && userType === 'admin';
  return (
    <div className="page">
      <PageHeader
        title={inCompany ? current?.name ?? t('company') : t('companies_title')}
        actions={
          inCompany ? (
            <>
              <Link className="button ghost" to={paths.console.allocate}>
                {t('allocate')}
              </Link>
              <Link className="button ghost" to={paths.console.companyHistory}>
                {t('company_history')}
              </Link>
            </>
          ) : null
        }
      />
      {inCompany ? <AdminCompany id={smeId} name={current?.name ?? ''} /> : <CompanyHub />}
    </div>
  );
}
