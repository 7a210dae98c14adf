import { useState } from 'react';
import { Link } from 'react-router';
import { deleteCompany, fetchMembers, inviteMember, removeMember, updateCompany } from '../../api/companies';
import { PERSONAL_SME_ID } from '../../constants';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { leaveDeletedCompany, reloadOrganizations } from '../../api/sessionActions';
import { ConfirmDialog } from '../../components/Dialog';
import { Field } from '../../components/fields';
import { PageHeader } from '../../components/sections';
import { formatDate } from '../../lib/format';
import { paths } from '../../lib/paths';
import { toast, withLoading } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import type { Member } from '../../api/types';
import { validateEmail } from '../../lib/validation';
import { CompanyHub } from './CompanyHub';
import { RecordsSection } from './RecordsTable';
import { ActionTable, AsyncItems, Section } from '../../components/sections';
import { CompanyNameForm } from './CompanyNameForm';
import { CompanyWallet } from './CompanyWallet';
import { FormCard, useForm } from '../../components/form';
import { SelectField } from '../../components/fields';
import { useConfirm } from '../../components/Dialog';

function Rename({ current }: { current: string }) {
  const t = useT();
  return (
    <CompanyNameForm
      id="rename-title"
      title={t('rename_company')}
      submitLabel={t('rename')}
      initial={current}
      save={async (name) => {
        await withLoading(() => updateCompany(name));
        await reloadOrganizations();
        toast('success', t('renamed'));
      }}
    />
  );
}

function Invite({ onInvited }: { onInvited: () => void }) {
  const t = useT();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'admin'>('member');
  const form = useForm<'email'>({
    validate: () => ({ email: validateEmail(email) }),
    action: async () => {
      await withLoading(() => inviteMember(email.trim(), role));
      toast('success', t('invited'));
      setEmail('');
      onInvited();
    },
    serverErrorField: 'email',
  });
  return (
    <FormCard id="invite-title" title={t('invite_member')} submitLabel={t('invite')} form={form}>
      <Field label={t('email')} type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={form.error('email')} />
      <SelectField
        id="invite-role"
        label={t('invite_as')}
        value={role}
        options={[
          ['member', t('role_member')],
          ['admin', t('role_admin')],
        ]}
        onChange={setRole}
      />
    </FormCard>
  );
}

function Members({ nonce }: { nonce: number }) {
  const t = useT();
  const me = useSession((s) => s.userInfo.email);
  const state = useAsync((_signal) => fetchMembers(), [nonce]);
  const remove = useConfirm(async (m: Member) => {
    await withLoading(() => removeMember(m.user_id));
    state.reload();
  });
  return (
    <Section id="members-title" title={t('members')}>
      <AsyncItems state={state} emptyIcon="friends" emptyTitle={t('no_members')}>
        {(items) => (
          <ActionTable columns={[t('name'), t('email'), t('role'), t('joined_at')]} actionLabel={t('remove')}>
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
                    <button type="button" className="button ghost small" onClick={() => remove.ask(m)} aria-label={`${t('remove')} ${m.email}`}>
                      {t('remove')}
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </ActionTable>
        )}
      </AsyncItems>
      <ConfirmDialog {...remove.dialog} title={t('remove')} text={`${t('remove')} ${remove.subject?.email ?? ''}?`} confirmLabel={t('remove')} />
    </Section>
  );
}

function DeleteCompany({ name }: { name: string }) {
  const t = useT();
  const del = useConfirm(async () => {
    await withLoading(async () => {
      await deleteCompany();
      await leaveDeletedCompany();
    });
    toast('success', t('company_deleted'));
  });
  return (
    <Section className="card danger-zone" id="delete-title" title={t('delete_company')}>
      <p className="muted">{t('delete_company_text')}</p>
      <button type="button" className="button danger" onClick={() => del.ask(true)}>
        {t('delete_company')}
      </button>
      <ConfirmDialog {...del.dialog} title={t('delete_company')} text={t('confirm_delete_company', { name })} confirmLabel={t('delete_company')} />
    </Section>
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
      <RecordsSection id="records-title" title={t('company_records')} emptyIcon="history" nonce={nonce} onAnswered={bump} />
      <Members nonce={nonce} />
      <CompanyWallet />
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
              <Link className="button ghost" to={paths.console.allocate()}>
                {t('allocate')}
              </Link>
              <Link className="button ghost" to={paths.console.companyHistory()}>
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
