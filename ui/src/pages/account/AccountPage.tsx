import { useRef, useState, type ChangeEvent } from 'react';
import { Link } from 'react-router';
import { checkAccountDeletion, deleteAccount, fetchProfile, uploadAvatar } from '../../api/iam';
import { FormError, useForm } from '../../components/form';
import type { DeletionReason } from '../../api/types';
import { AVATAR_TYPES } from '../../constants';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { Avatar } from '../../components/Avatar';
import { ApiKeys } from './ApiKeys';
import { TwoFactor } from './TwoFactor';
import { Dialog } from '../../components/Dialog';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { PasswordField } from '../../components/fields';
import { formatDate } from '../../lib/format';
import { toast, toastFailure, withLoading } from '../../stores/feedback';
import { clearSession, updateUserInfo } from '../../stores/session';
import { navigateTo } from '../../lib/navigation';
import { paths } from '../../lib/paths';
import type { MessageKey } from '../../i18n';
import { validateAvatar, validatePasswordPresent } from '../../lib/validation';

const REASONS: Record<DeletionReason, MessageKey> & Partial<Record<string, MessageKey>> = {
  devices_linked: 'reason_devices_linked',
  apps_rented: 'reason_apps_rented',
  balance_outstanding: 'reason_balance_outstanding',
  companies_joined: 'reason_companies_joined',
};

function DeleteAccount() {
  const t = useT();
  const [open, setOpen] = useState(false);
  const [reasons, setReasons] = useState<string[] | null>(null);
  const [password, setPassword] = useState('');
  const form = useForm({
    validate: () => ({ form: validatePasswordPresent(password) }),
    action: async () => {
      try {
        await deleteAccount(password);
      } catch (err) {
        const data = (err as { data?: { reasons?: string[] } }).data;
        if (data?.reasons?.length) setReasons(data.reasons);
        throw err;
      }
      clearSession();
      toast('success', t('account_deleted'));
      navigateTo(paths.auth.signIn(), { replace: true });
    },
  });

  const start = () =>
    toastFailure(async () => {
      form.reset();
      setPassword('');
      const check = await withLoading(() => checkAccountDeletion());
      setReasons(check.deletable ? [] : check.reasons ?? []);
      setOpen(true);
    });
  const blocked = Boolean(reasons && reasons.length);
  return (
    <section className="card danger-zone">
      <h2>{t('delete_account')}</h2>
      <p className="muted">{t('delete_account_text')}</p>
      <button type="button" className="button danger" onClick={() => void start()}>
        {t('delete_account')}
      </button>
      <Dialog
        open={open}
        title={t('delete_account')}
        onClose={() => setOpen(false)}
        footer={
          <>
            <button type="button" className="button ghost" onClick={() => setOpen(false)}>
              {t('cancel')}
            </button>
            {!blocked ? (
              <button type="button" className="button danger" disabled={form.busy} onClick={() => form.submit()}>
                {t('delete_account')}
              </button>
            ) : null}
          </>
        }
      >
        {blocked ? (
          <>
            <p>{t('delete_account_blocked')}</p>
            <ul className="reasons">
              {reasons!.map((r) => (
                <li key={r}>{REASONS[r] ? t(REASONS[r]!) : r}</li>
              ))}
            </ul>
          </>
        ) : (
          <>
            <p>{t('delete_account_confirm')}</p>
            <PasswordField label={t('password')} autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
          </>
        )}
        <FormError form={form} />
      </Dialog>
    </section>
  );
}

export default function AccountPage() {
  const t = useT();
  const state = useAsync((_signal) => fetchProfile(), []);
  const fileInput = useRef<HTMLInputElement>(null);
  const chosen = useRef<File | null>(null);
  const profile = state.data;
  const avatar = useForm<'avatar'>({
    validate: () => ({ avatar: chosen.current ? validateAvatar(chosen.current) : null }),
    action: async () => {
      const file = chosen.current;
      if (!file) return;
      const res = await withLoading(() => uploadAvatar(file));
      updateUserInfo({ avatar_url: res.avatar_url });
      state.setData((p) => (p ? { ...p, avatar_url: res.avatar_url } : p));
      toast('success', t('avatar_updated'));
    },
    serverErrorField: 'avatar',
  });

  const onFile = (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file) return;
    chosen.current = file;
    avatar.submit();
  };

  return (
    <div className="page narrow">
      <PageHeader title={t('account')} />
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines lines={4} />
      ) : profile ? (
        <section className="card profile-card">
          <h2>{t('profile')}</h2>
          <div className="profile-row">
            <Avatar name={profile.name || profile.email} url={profile.avatar_url} size={72} />
            <div className="field">
              <label htmlFor="avatar-file" className="button ghost small">
                {t('change_avatar')}
              </label>
              <input
                id="avatar-file"
                ref={fileInput}
                className="visually-hidden"
                type="file"
                accept={AVATAR_TYPES.join(',')}
                onChange={onFile}
              />
              {avatar.error('avatar') ? (
                <p className="field-error" role="alert">
                  {avatar.error('avatar')}
                </p>
              ) : null}
            </div>
          </div>
          <dl className="facts">
            <div>
              <dt>{t('username')}</dt>
              <dd>
                {profile.name || '-'}{' '}
                <Link className="inline-link" to={paths.console.username()}>
                  {t('edit')}
                </Link>
              </dd>
            </div>
            <div>
              <dt>{t('email')}</dt>
              <dd>{profile.email}</dd>
            </div>
            <div>
              <dt>{t('user_id')}</dt>
              <dd className="mono">{profile.id}</dd>
            </div>
            <div>
              <dt>{t('member_since')}</dt>
              <dd>{formatDate(profile.created_at)}</dd>
            </div>
          </dl>
        </section>
      ) : null}
      <section className="card">
        <h2>{t('security')}</h2>
        <Link className="button ghost" to={paths.console.password()}>
          {t('change_password')}
        </Link>
      </section>
      <TwoFactor />
      <ApiKeys />
      <DeleteAccount />
    </div>
  );
}
