// The wallet's entries, newest first: all, income or expense (?kind=), a page at a time.
import { fetchEntries } from '../../api/wallet';
import type { EntryKind, WalletEntry } from '../../api/types';
import type { MessageKey } from '../../i18n';
import { formatCoins, formatDateTime } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { LoadMore } from '../LoadMore';
import { AsyncItems, Section } from '../sections';
import { refLabel, signedCoins, splitText } from './walletText';
import { useQueryChoice } from '../../lib/useQueryChoice';
import { CsvButton } from './CsvButton';

const KINDS: { value: EntryKind | null; label: MessageKey; empty: MessageKey; hint: MessageKey }[] = [
  { value: null, label: 'wallet_all', empty: 'wallet_no_entries', hint: 'wallet_no_entries_hint' },
  { value: 'income', label: 'wallet_income', empty: 'wallet_no_income', hint: 'wallet_no_income_hint' },
  { value: 'expense', label: 'wallet_expense', empty: 'wallet_no_expense', hint: 'wallet_no_expense_hint' },
];

function EntriesTable({ items }: { items: WalletEntry[] }) {
  const t = useT();
  return (
    <div className="table-wrap">
      <table className="table wallet-table">
        <thead>
          <tr>
            <th scope="col">{t('time')}</th>
            <th scope="col">{t('wallet_what')}</th>
            <th scope="col">{t('wallet_memo')}</th>
            <th scope="col" className="num">
              {t('wallet_amount')}
            </th>
            <th scope="col" className="num">
              {t('wallet_balance_after')}
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((e) => {
            const split = splitText(t, e);
            return (
              <tr key={e.id} data-entry-kind={e.kind}>
                <td>{formatDateTime(e.created_at)}</td>
                <td>{e.title ?? refLabel(t, e.ref_type)}</td>
                <td>{e.memo || '-'}</td>
                <td className={`num amount ${e.kind}`}>
                  {signedCoins(e.amount)}
                  {split && <small className="amount-split">{split}</small>}
                </td>
                <td className="num">{formatCoins(e.balance_after)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function EntriesSection({ nonce }: { nonce: number }) {
  const t = useT();
  const [current, choose] = useQueryChoice('kind', KINDS);
  const state = useAsync((signal) => fetchEntries(current.value, 0, signal), [current.value, nonce]);
  return (
    <Section id="wallet-entries-title" title={t('wallet_entries')} className="wallet-section">
      <div className="segmented" role="group" aria-label={t('wallet_filter')}>
        {KINDS.map((k) => (
          <button key={k.label} type="button" aria-pressed={k === current} onClick={() => choose(k)}>
            {t(k.label)}
          </button>
        ))}
      </div>
      <CsvButton what="entries" filter={current.value} />
      <AsyncItems state={state} emptyIcon="wallet" emptyTitle={t(current.empty)} emptyText={t(current.hint)}>
        {(items) => <EntriesTable items={items} />}
      </AsyncItems>
      <LoadMore state={state} fetchPage={(offset) => fetchEntries(current.value, offset)} />
    </Section>
  );
}
