// The email + password form, shared by the sign-in page and the pages that sign in in place
// (the invitation link and the company page, which phones open directly: docs/product.md §2 keeps
// them out of the phone redirect while the sign-in page is not).
import { useState } from 'react';
import { signIn } from '../../api/iam';
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
  const form = useForm<'email' | 'password'>({
    validate: () => ({ email: validateEmail(email), password: validatePasswordPresent(password) }),
    action: async () => {
      const session = await signIn(email.trim(), password);
      applySession(session);
      toast('success', t('signed_in'));
      onSignedIn();
    },
  });

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
