// The company's wallet on the company page, for its administrators (the admin menu has no /wallet;
// in the company context the wallet calls answer the company's): its figures, a Fund form moving
// coins from the administrator's own wallet into it, a top-up code to redeem into it, its entries
// and bills (a rental's bill names who rented it). Rentals made in the company context are held
// and charged here.
import { useState } from 'react';
import { fetchWallet, fundCompany } from '../../api/wallet';
import { Field } from '../../components/fields';
import { FormCard, useForm } from '../../components/form';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { Section } from '../../components/sections';
import { BillsSection } from '../../components/wallet/BillsSection';
import { EntriesSection } from '../../components/wallet/EntriesSection';
import { RedeemForm } from '../../components/wallet/RedeemForm';
import { WalletFigures } from '../../components/wallet/WalletFigures';
import { useRequestKey } from '../../components/wallet/requestKey';
import { formatCoins, parseCoins } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { ApiError } from '../../lib/http';
import { useAsync } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';

function Fund({ onFunded }: { onFunded: () => void }) {
  const t = useT();
  const [amount, setAmount] = useState('');
  // A move above the market's threshold asks a person with two-factor sign-in on for a code.
  const [code, setCode] = useState<string | null>(null);
  const key = useRequestKey('fund');
  const form = useForm<'amount' | 'code'>({
    validate: () => ({ amount: parseCoins(amount) === null ? 'fund_amount_invalid' : null }),
    action: async () => {
      const cents = parseCoins(amount) ?? 0;
      try {
        await fundCompany(cents, key.keyFor(String(cents)), code?.trim() || undefined);
      } catch (e) {
        if (e instanceof ApiError && e.error === 'two_factor_step_up') setCode((c) => c ?? '');
        throw e;
      }
      key.done();
      setAmount('');
      setCode(null);
      onFunded();
      toast('success', t('fund_done', { amount: formatCoins(cents) }));
    },
    serverErrorField: 'amount',
    serverFields: { code: 'code' },
  });
  return (
    <FormCard id="fund-title" title={t('fund_title')} submitLabel={t('fund_submit')} form={form}>
      <Field
        label={t('fund_amount')}
        name="amount"
        inputMode="decimal"
        autoComplete="off"
        value={amount}
        onChange={(e) => setAmount(e.target.value)}
        error={form.error('amount')}
        hint={t('fund_amount_hint')}
      />
      {code !== null ? (
        <Field label={t('two_factor_code')} name="code" inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} error={form.error('code')} />
      ) : null}
    </FormCard>
  );
}

export function CompanyWallet() {
  const t = useT();
  const [nonce, setNonce] = useState(0);
  const bump = () => setNonce((n) => n + 1);
  const wallet = useAsync((signal) => fetchWallet(signal), [nonce]);
  return (
    <>
      <Section id="company-wallet-title" title={t('company_wallet')} className="card company-wallet">
        <p className="muted">{t('company_wallet_intro')}</p>
        {wallet.error ? <ErrorNote text={wallet.error} onRetry={wallet.reload} /> : null}
        {wallet.data ? <WalletFigures w={wallet.data} /> : wallet.loading ? <SkeletonLines lines={2} /> : null}
      </Section>
      <div className="grid-2">
        <Fund onFunded={bump} />
        <RedeemForm title={t('redeem_code_title')} onRedeemed={bump} />
      </div>
      <EntriesSection nonce={nonce} />
      <BillsSection nonce={nonce} />
    </>
  );
}
