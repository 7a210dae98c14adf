// A wallet's figures: balance, held, available and runway, then the totals (the wallet page, the
// company page's wallet).
import type { Wallet } from '../../api/types';
import { formatCoins } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { Figure } from '../Figure';
import { runwayText } from './walletText';

export function WalletFigures({ w }: { w: Wallet }) {
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
