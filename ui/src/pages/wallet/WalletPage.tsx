// /wallet: the wallet of the current context — balance, held, available and runway; income and
// expense by day; entries (all, income, expense) and bills (unbilled, billed). Read-only: coins
// move through rentals, orders, grants, the signup bonus and top-up codes (/wallet/top-up).
// Also the phone's /m/wallet (issue 41): the figures, a code to redeem in place, the entries.
import { useState } from 'react';
import { Link } from 'react-router';
import { fetchDaily, fetchWallet } from '../../api/wallet';
import { PERSONAL_SME_ID, WALLET_CHART_DAYS } from '../../constants';
import { paths, usePublicPaths } from '../../lib/paths';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { useSession } from '../../stores/session';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader, Section } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { DailyChart } from '../../components/DailyChart';
import { WalletFigures } from '../../components/wallet/WalletFigures';
import { EntriesSection } from '../../components/wallet/EntriesSection';
import { BillsSection } from '../../components/wallet/BillsSection';
import { RedeemForm } from '../../components/wallet/RedeemForm';

export default function WalletPage() {
  const t = useT();
  const company = useSession((s) => s.smeId) !== PERSONAL_SME_ID;
  const { mobile } = usePublicPaths();
  const [nonce, setNonce] = useState(0);
  const wallet = useAsync((signal) => fetchWallet(signal), [nonce]);
  const daily = useAsync(mobile ? null : (signal) => fetchDaily(WALLET_CHART_DAYS, signal), [nonce, mobile]);
  const moved = (daily.data ?? []).some((d) => d.income > 0 || d.expense > 0);
  return (
    <div className="page wallet-page">
      <PageHeader
        title={t('wallet')}
        subtitle={t(company ? 'wallet_company_intro' : 'wallet_intro')}
        actions={
          <>
            {mobile ? null : (
              <Link className="button primary" to={paths.console.topUp()}>
                <Icon name="wallet" size={16} /> {t('topup_get_coins')}
              </Link>
            )}
            <button type="button" className="button ghost" onClick={() => setNonce((n) => n + 1)}>
              <Icon name="history" size={16} /> {t('wallet_refresh')}
            </button>
          </>
        }
      />
      {wallet.error ? <ErrorNote text={wallet.error} onRetry={wallet.reload} /> : null}
      {wallet.data ? <WalletFigures w={wallet.data} /> : wallet.loading ? <SkeletonLines lines={2} /> : null}
      {mobile ? <RedeemForm title={t('redeem_code_title')} onRedeemed={() => setNonce((n) => n + 1)} /> : null}
      {mobile ? null : (
        <Section id="wallet-chart-title" title={t('wallet_chart', { n: WALLET_CHART_DAYS })} className="wallet-section">
          {daily.error ? <ErrorNote text={daily.error} onRetry={daily.reload} /> : null}
          {daily.loading ? <SkeletonLines lines={3} /> : daily.data ? (moved ? <DailyChart days={daily.data} /> : <p className="muted">{t('wallet_chart_empty', { n: WALLET_CHART_DAYS })}</p>) : null}
        </Section>
      )}
      <EntriesSection nonce={nonce} />
      {mobile ? null : <BillsSection nonce={nonce} />}
    </div>
  );
}
