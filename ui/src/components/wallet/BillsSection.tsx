// The wallet's bills: metered usage per hour, unbilled while the hour is open, then billed (?bills=).
import { fetchBills } from '../../api/wallet';
import type { Bill, BillStatus } from '../../api/types';
import type { MessageKey } from '../../i18n';
import { formatCoins, formatDateTime } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { LoadMore } from '../LoadMore';
import { AsyncItems, Section } from '../sections';
import { refLabel } from './walletText';
import { useQueryChoice } from '../../lib/useQueryChoice';
import { CsvButton } from './CsvButton';

const TABS: { value: BillStatus; label: MessageKey; empty: MessageKey; hint: MessageKey }[] = [
  { value: 'unbilled', label: 'bills_unbilled', empty: 'wallet_no_unbilled', hint: 'wallet_no_unbilled_hint' },
  { value: 'billed', label: 'bills_billed', empty: 'wallet_no_billed', hint: 'wallet_no_billed_hint' },
];

function BillsTable({ items }: { items: Bill[] }) {
  const t = useT();
  // A company's bills name who rented (`by`); a person's own bills do not.
  const named = items.some((b) => b.by);
  return (
    <div className="table-wrap">
      <table className="table wallet-table">
        <thead>
          <tr>
            <th scope="col">{t('bill_period')}</th>
            <th scope="col">{t('bill_for')}</th>
            {named ? <th scope="col">{t('bill_by')}</th> : null}
            <th scope="col" className="num">
              {t('wallet_amount')}
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((b) => (
            <tr key={b.id}>
              <td>
                {formatDateTime(b.period_start)} – {formatDateTime(b.period_end).slice(11)}
              </td>
              <td>
                {b.title ?? refLabel(t, b.ref_type)}
              </td>
              {named ? <td className="bill-by">{b.by ?? '-'}</td> : null}
              <td className="num">{formatCoins(b.amount)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function BillsSection({ nonce }: { nonce: number }) {
  const t = useT();
  const [current, choose] = useQueryChoice('bills', TABS);
  const state = useAsync((signal) => fetchBills(current.value, 0, signal), [current.value, nonce]);
  return (
    <Section id="wallet-bills-title" title={t('wallet_bills')} className="wallet-section">
      <div className="category-tabs" role="tablist" aria-label={t('wallet_bills')}>
        {TABS.map((x) => (
          <button
            key={x.value}
            type="button"
            role="tab"
            id={`bills-tab-${x.value}`}
            aria-selected={x === current}
            aria-controls="bills-panel"
            className={x === current ? 'tab active' : 'tab'}
            onClick={() => choose(x)}
          >
            {t(x.label)}
          </button>
        ))}
      </div>
      <div id="bills-panel" role="tabpanel" aria-labelledby={`bills-tab-${current.value}`}>
        <CsvButton what="bills" filter={current.value} />
        <AsyncItems state={state} emptyIcon="wallet" emptyTitle={t(current.empty)} emptyText={t(current.hint)}>
          {(items) => <BillsTable items={items} />}
        </AsyncItems>
        <LoadMore state={state} fetchPage={(offset) => fetchBills(current.value, offset)} />
      </div>
    </Section>
  );
}
