// /wallet/top-up: how coins are had on this market (the operator's words) and a top-up code to
// redeem into the wallet of the current context. A retry of the same submission sends the same
// Idempotency-Key, so a lost answer never credits a code twice.
import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { fetchTopUpInfo, fetchWallet, redeemCode } from '../../api/wallet';
import type { Wallet } from '../../api/types';
import { Field } from '../../components/fields';
import { SubmitButton, useForm } from '../../components/form';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader, Section } from '../../components/sections';
import { formatCoins } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';

const newKey = () => `redeem-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

export default function TopUpPage() {
  const t = useT();
  const info = useAsync((signal) => fetchTopUpInfo(signal), []);
  const current = useAsync((signal) => fetchWallet(signal), []);
  const [code, setCode] = useState('');
  const [after, setAfter] = useState<Wallet | null>(null);
  const key = useRef({ code: '', key: newKey() });
  const form = useForm<'code'>({
    validate: () => ({ code: code.trim() ? null : 'topup_code_required' }),
    action: async () => {
      const typed = code.trim();
      if (key.current.code !== typed) key.current = { code: typed, key: newKey() };
      const w = await redeemCode(typed, key.current.key);
      key.current = { code: '', key: newKey() };
      setAfter(w);
      setCode('');
      toast('success', t('topup_redeemed', { available: formatCoins(w.available) }));
    },
    serverErrorField: 'code',
  });
  const wallet = after ?? current.data;
  return (
    <div className="page narrow topup-page">
      <PageHeader title={t('top_up')} subtitle={t('topup_intro')} />
      <Section id="topup-how-title" title={t('topup_how')}>
        {info.error ? <ErrorNote text={info.error} onRetry={info.reload} /> : null}
        {info.loading ? <SkeletonLines lines={2} /> : info.data ? <p className="topup-how">{info.data.text}</p> : null}
      </Section>
      <form className="card form-card" onSubmit={form.submit} noValidate>
        <Field
          label={t('topup_code')}
          name="code"
          autoComplete="off"
          spellCheck={false}
          placeholder="ZM-XXXX-XXXX-XXXX-XXXX"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          error={form.error('code')}
          hint={t('topup_code_hint')}
        />
        <div className="row-actions">
          <SubmitButton form={form}>{t('topup_redeem')}</SubmitButton>
          <Link className="button ghost" to={paths.console.wallet()}>
            {t('topup_back')}
          </Link>
        </div>
      </form>
      {wallet ? (
        <p className="muted topup-balance" data-available={wallet.available}>
          {t('topup_balance', { balance: formatCoins(wallet.balance), available: formatCoins(wallet.available) })}
        </p>
      ) : null}
    </div>
  );
}
