// /wallet: the wallet of the current context — balance, held, available and runway; income and
// expense by day; entries (all, income, expense) and bills (unbilled, billed). Read-only: coins
// move through rentals, orders, grants, the signup bonus and top-up codes (/wallet/top-up).
import { useState } from 'react';
import { Link } from 'react-router';
import { fetchDaily, fetchWallet } from '../../api/wallet';
import type { Wallet } from '../../api/types';
import { PERSONAL_SME_ID, WALLET_CHART_DAYS } from '../../constants';
import { formatCoins } from '../../lib/format';
import { paths } from '../../lib/paths';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { useSession } from '../../stores/session';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { PageHeader, Section } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { DailyChart } from '../../components/DailyChart';
import { Figure } from '../../components/Figure';
import { EntriesSection } from './EntriesSection';
import { BillsSection } from './BillsSection';
import { runwayText } from './walletText';

function Figures({ w }: { w: Wallet }) {
  const t = useT();
  const coins = t('coins');
  return (
    <>
      <dl className="wallet-figures">
        <Figure id="balance" label={t('wallet_balance')} value={formatCoins(w.balance)} unit={coins} hint={t('wallet_balance_hint')} />
        <Figure id="held" label={t('wallet_held')} value={formatCoins(w.held)} unit={coins} hint={t('wallet_held_hint')} />
        <Figure id="available" label={t('wallet_available')} value={formatCoins(w.available)} unit={coins} hint={t('wallet_available_hint')} />
        <Figure id="runway" label={t('wallet_runway')} value={runwayText(t, w.runway_secs)} hint={t('wallet_runway_hint')} />
      </dl>
      <p className="muted wallet-totals">
        {t('wallet_totals', { income: formatCoins(w.income_total), expense: formatCoins(w.expense_total), unbilled: formatCoins(w.unbilled) })}
      </p>
    </>
  );
}

export default function WalletPage() {
  const t = useT();
  const company = useSession((s) => s.smeId) !== PERSONAL_SME_ID;
  const [nonce, setNonce] = useState(0);
  const wallet = useAsync((signal) => fetchWallet(signal), [nonce]);
  const daily = useAsync((signal) => fetchDaily(WALLET_CHART_DAYS, signal), [nonce]);
  const moved = (daily.data ?? []).some((d) => d.income > 0 || d.expense > 0);
  return (
    <div className="page wallet-page">
      <PageHeader
        title={t('wallet')}
        subtitle={t(company ? 'wallet_company_intro' : 'wallet_intro')}
        actions={
          <>
            <Link className="button primary" to={paths.console.topUp()}>
              <Icon name="wallet" size={16} /> {t('topup_get_coins')}
            </Link>
            <button type="button" className="button ghost" onClick={() => setNonce((n) => n + 1)}>
              <Icon name="history" size={16} /> {t('wallet_refresh')}
            </button>
          </>
        }
      />
      {wallet.error ? <ErrorNote text={wallet.error} onRetry={wallet.reload} /> : null}
      {wallet.data ? <Figures w={wallet.data} /> : wallet.loading ? <SkeletonLines lines={2} /> : null}
      <Section id="wallet-chart-title" title={t('wallet_chart', { n: WALLET_CHART_DAYS })} className="wallet-section">
        {daily.error ? <ErrorNote text={daily.error} onRetry={daily.reload} /> : null}
        {daily.loading ? <SkeletonLines lines={3} /> : daily.data ? (moved ? <DailyChart days={daily.data} /> : <p className="muted">{t('wallet_chart_empty', { n: WALLET_CHART_DAYS })}</p>) : null}
      </Section>
      <EntriesSection nonce={nonce} />
      <BillsSection nonce={nonce} />
    </div>
  );
}
