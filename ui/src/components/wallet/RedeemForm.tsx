// A top-up code to redeem into the wallet of the current context (the top-up page; the company
// page's wallet, where it credits the company). A retry of the same code sends the same
// Idempotency-Key, so a lost answer never credits a code twice.
import { useState, type ReactNode } from 'react';
import { redeemCode } from '../../api/wallet';
import type { Wallet } from '../../api/types';
import { formatCoins } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { toast } from '../../stores/feedback';
import { Field } from '../fields';
import { FormError, SubmitButton, useForm } from '../form';
import { useRequestKey } from './requestKey';

export function RedeemForm({ title, actions, onRedeemed }: { title?: string; actions?: ReactNode; onRedeemed: (w: Wallet) => void }) {
  const t = useT();
  const [code, setCode] = useState('');
  const key = useRequestKey('redeem');
  const form = useForm<'code'>({
    validate: () => ({ code: code.trim() ? null : 'topup_code_required' }),
    action: async () => {
      const typed = code.trim();
      const w = await redeemCode(typed, key.keyFor(typed));
      key.done();
      setCode('');
      onRedeemed(w);
      toast('success', t('topup_redeemed', { available: formatCoins(w.available) }));
    },
    serverErrorField: 'code',
  });
  return (
    <form className="card form-card redeem-form" onSubmit={form.submit} noValidate aria-labelledby={title ? 'redeem-title' : undefined}>
      {title ? <h2 id="redeem-title">{title}</h2> : null}
      <Field
        label={t('topup_code')}
        name="code"
        autoComplete="off"
        spellCheck={false}
        placeholder="ZM-XXXX-XXXX-XXXX-XXXX"
        translate="no"
        value={code}
        onChange={(e) => setCode(e.target.value)}
        error={form.error('code')}
        hint={t('topup_code_hint')}
      />
      <FormError form={form} />
      <div className="row-actions">
        <SubmitButton form={form}>{t('topup_redeem')}</SubmitButton>
        {actions}
      </div>
    </form>
  );
}
