// The email + password form, shared by the sign-in page and the pages that sign in in place
// (the invitation link and the company page, which phones open directly: SPEC.md §2 keeps
// them out of the phone redirect while the sign-in page is not).
import { useState, type FormEvent } from 'react';
import { signIn } from '../api/iam';
import { errorText } from '../api/client';
import { Field, PasswordField } from './ui';
import { toast } from '../stores/feedback';
import type { MessageKey } from '../i18n';
import { validateEmail, validatePasswordPresent } from '../lib/validation';
import { useT } from '../lib/i18n';
import { applySession } from '../api/sessionActions';

export function SignInForm({ onSignedIn }: { onSignedIn: () => void }) {
  const t = useT();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<{ email?: MessageKey | null; password?: MessageKey | null }>({});
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next = { email: validateEmail(email), password: validatePasswordPresent(password) };
    setErrors(next);
    if (next.email || next.password) return;
    setBusy(true);
    setServerError(null);
    try {
      const session = await signIn(email.trim(), password);
      applySession(session);
      toast('success', t('signed_in'));
      onSignedIn();
    } catch (err) {
      setServerError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <Field
        label={t('email')}
        type="email"
        name="email"
        autoComplete="email"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        error={errors.email ? t(errors.email) : undefined}
      />
      <PasswordField
        label={t('password')}
        name="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
        error={errors.password ? t(errors.password) : undefined}
      />
      {serverError ? (
        <p className="form-error" role="alert">
          {serverError}
        </p>
      ) : null}
      <button type="submit" className="button primary full" disabled={busy}>
        {t('sign_in_action')}
      </button>
    </form>
  );
}
