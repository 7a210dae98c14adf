// The email + password form, shared by the sign-in page and the pages that sign in in place
// (the invitation link and the company page, which phones open directly: docs/product.md §2 keeps
// them out of the phone redirect while the sign-in page is not). With two-factor sign-in on, the
// password's answer is a challenge: the form then asks for the code (docs/identity.md).
import { useState } from 'react';
import { signIn, signInTwoFactor } from '../../api/iam';
import { ApiError } from '../../lib/http';
import { applySession } from '../../api/sessionActions';
import { useT } from '../../lib/i18n';
import { validateEmail, validatePasswordPresent } from '../../lib/validation';
import { toast } from '../../stores/feedback';
import { Field, PasswordField } from '../fields';
import { FormError, SubmitButton, useForm } from '../form';

export function SignInForm({ onSignedIn }: { onSignedIn: () => void }) {
  const t = useT();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState('');
  const [code, setCode] = useState('');
  const [remember, setRemember] = useState(false);
  const form = useForm<'email' | 'password' | 'code'>({
    validate: () => (challenge ? {} : { email: validateEmail(email), password: validatePasswordPresent(password) }),
    action: async () => {
      let session;
      try {
        session = challenge ? await signInTwoFactor(challenge, code.trim(), remember) : await signIn(email.trim(), password);
      } catch (e) {
        const asked = e instanceof ApiError && e.error === 'two_factor_required' ? (e.data as { challenge?: string } | null)?.challenge : undefined;
        if (!asked) {
          // An expired challenge starts the sign-in again.
          if (e instanceof ApiError && e.error === 'two_factor_challenge_invalid') setChallenge('');
          throw e;
        }
        setChallenge(asked);
        return;
      }
      applySession(session);
      toast('success', t('signed_in'));
      onSignedIn();
    },
    serverFields: { code: 'code' },
  });

  if (challenge)
    return (
      <form onSubmit={form.submit} noValidate>
        <Field
          label={t('two_factor_code')}
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          autoFocus
          value={code}
          onChange={(e) => setCode(e.target.value)}
          error={form.error('code')}
        />
        <label className="checkbox-row">
          <input type="checkbox" name="remember" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
          <span>{t('two_factor_remember')}</span>
        </label>
        <FormError form={form} />
        <SubmitButton form={form} className="button primary full">
          {t('sign_in_action')}
        </SubmitButton>
      </form>
    );
  return (
    <form onSubmit={form.submit} noValidate>
      <Field
        label={t('email')}
        type="email"
        name="email"
        autoComplete="email"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        error={form.error('email')}
      />
      <PasswordField
        label={t('password')}
        name="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
        error={form.error('password')}
      />
      <FormError form={form} />
      <SubmitButton form={form} className="button primary full">
        {t('sign_in_action')}
      </SubmitButton>
    </form>
  );
}
