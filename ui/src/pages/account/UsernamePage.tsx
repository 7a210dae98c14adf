import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { updateProfileInfo } from '../../api/iam';
import { errorText } from '../../api/client';
import { useT } from '../../lib/i18n';
import { Field, PageHeader } from '../../components/ui';
import { toast } from '../../stores/feedback';
import { updateUserInfo, useSession } from '../../stores/session';
import { paths } from '../../lib/paths';
import { validateUsername } from '../../lib/validation';

export default function UsernamePage() {
  const t = useT();
  const navigate = useNavigate();
  const current = useSession((s) => s.userInfo.name);
  const [name, setName] = useState(current);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const key = validateUsername(name);
    setError(key ? t(key) : undefined);
    if (key) return;
    setBusy(true);
    try {
      const profile = await updateProfileInfo(name.trim());
      updateUserInfo({ name: profile?.name ?? name.trim() });
      toast('success', t('username_changed'));
      navigate(paths.console.account);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="page narrow">
      <PageHeader title={t('change_username')} />
      <form className="card form-card" onSubmit={submit} noValidate>
        <Field label={t('username')} name="username" autoComplete="username" value={name} onChange={(e) => setName(e.target.value)} error={error} hint={t('username_rule')} />
        <div className="row-actions">
          <button type="submit" className="button primary" disabled={busy}>
            {t('save')}
          </button>
          <button type="button" className="button ghost" onClick={() => navigate(paths.console.account)}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </div>
  );
}
