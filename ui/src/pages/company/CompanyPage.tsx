import { useState, type FormEvent } from 'react';
import { createCompany, fetchMembers, inviteMember, removeMember } from '../../api/company';
import { errorText } from '../../api/client';
import { PERSONAL_SME_ID } from '../../constants';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { switchCompany } from '../../app/session';
import { EmptyState, ErrorNote, Field, PageHeader, SkeletonLines } from '../../components/ui';
import { formatDate } from '../../format';
import { toast, withLoading } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import { validateCompanyName, validateEmail } from '../auth/validation';

function CreateCompany() {
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
    <form className="card form-card" onSubmit={submit} noValidate>
      <h2>{t('create_company')}</h2>
      <Field label={t('company_name')} value={name} onChange={(e) => setName(e.target.value)} error={error} />
      <button type="submit" className="button primary">
        {t('create')}
      </button>
    </form>
  );
}

function Members() {
  const t = useT();
  const state = useAsync((_signal) => fetchMembers(), []);
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | undefined>();
  const invite = async (e: FormEvent) => {
    e.preventDefault();
    const key = validateEmail(email);
    setError(key ? t(key) : undefined);
    if (key) return;
    try {
      await withLoading(() => inviteMember(email.trim()));
      toast('success', t('invited'));
      setEmail('');
    } catch (err) {
      setError(errorText(err));
    }
  };
  const remove = async (userId: string) => {
    try {
      await withLoading(() => removeMember(userId));
      state.reload();
    } catch (err) {
      toast('error', errorText(err));
    }
  };
  const items = state.data?.items ?? [];
  return (
    <>
      <form className="card form-card inline-form" onSubmit={invite} noValidate>
        <Field label={t('invite_member')} type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={error} />
        <button type="submit" className="button primary">
          {t('invite')}
        </button>
      </form>
      <h2>{t('members')}</h2>
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
                  <td>{m.name}</td>
                  <td>{m.email}</td>
                  <td>{m.role}</td>
                  <td>{formatDate(m.joined_at)}</td>
                  <td>
                    {m.role !== 'admin' ? (
                      <button type="button" className="button ghost small" onClick={() => void remove(m.user_id)}>
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
    </>
  );
}

export default function CompanyPage() {
  const t = useT();
  const smeId = useSession((s) => s.smeId);
  const orgs = useSession((s) => s.organizationList);
  const current = orgs.find((o) => o.id === smeId);
  const personal = smeId === PERSONAL_SME_ID;
  return (
    <div className="page">
      <PageHeader title={personal ? t('company') : current?.name ?? t('company')} />
      {personal ? <CreateCompany /> : <Members />}
    </div>
  );
}
