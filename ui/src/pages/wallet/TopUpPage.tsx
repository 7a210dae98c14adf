// /wallet/top-up: how coins are had on this market (the operator's words) and a top-up code to
// redeem into the wallet of the current context (components/wallet/RedeemForm).
import { useState } from 'react';
import { Link } from 'react-router';
import { fetchTopUpInfo, fetchWallet } from '../../api/wallet';
import type { Wallet } from '../../api/types';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader, Section } from '../../components/sections';
import { RedeemForm } from '../../components/wallet/RedeemForm';
import { formatCoins } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';

export default function TopUpPage() {
  const t = useT();
  const info = useAsync((signal) => fetchTopUpInfo(signal), []);
  const current = useAsync((signal) => fetchWallet(signal), []);
  const [after, setAfter] = useState<Wallet | null>(null);
  const wallet = after ?? current.data;
  return (
    <div className="page narrow topup-page">
      <PageHeader title={t('top_up')} subtitle={t('topup_intro')} />
      <Section id="topup-how-title" title={t('topup_how')}>
        {info.error ? <ErrorNote text={info.error} onRetry={info.reload} /> : null}
        {info.loading ? <SkeletonLines lines={2} /> : info.data ? <p className="topup-how">{info.data.text}</p> : null}
      </Section>
      <RedeemForm
        onRedeemed={setAfter}
        actions={
          <Link className="button ghost" to={paths.console.wallet()}>
            {t('topup_back')}
          </Link>
        }
      />
      {wallet ? (
        <p className="muted topup-balance" data-available={wallet.available}>
          {t('topup_balance', { balance: formatCoins(wallet.balance), available: formatCoins(wallet.available) })}
        </p>
      ) : null}
    </div>
  );
}
