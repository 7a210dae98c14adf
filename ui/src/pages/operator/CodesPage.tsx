// /operator/codes: top-up codes. Issue a batch (coins each, how many, an optional last day): the
// codes are shown once, to copy or download, because only their last four characters are kept.
// The list shows every code's state (unused, redeemed by whom, expired) and exports as CSV.
import { useRef, useState } from 'react';
import { fetchCodes, fetchCodesCsv, issueCodes } from '../../api/ops';
import type { OpsIssuedCodes } from '../../api/types';
import { Dialog } from '../../components/Dialog';
import { Field, SelectField } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Icon } from '../../components/Icon';
import { LoadMore } from '../../components/LoadMore';
import { AsyncItems, PageHeader, Section } from '../../components/sections';
import { copyText } from '../../lib/clipboard';
import { saveBlob } from '../../lib/download';
import { formatCoins, formatDate, formatDateTime, parseCoins } from '../../lib/format';
import { useAsync } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';
import { useOpsT, type OpsT } from './operatorText';

type State = '' | 'unused' | 'redeemed' | 'expired';

const newKey = () => `codes-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
const count = (typed: string): number | null => (/^\d{1,5}$/.test(typed.trim()) && Number(typed) >= 1 && Number(typed) <= 10000 ? Number(typed) : null);

/** The end of the day typed (local), as the last moment a code can be redeemed. */
function endOfDay(day: string): string | null {
  if (!day) return null;
  const d = new Date(`${day}T23:59:59`);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

const stateLabel = (t: OpsT, s: string) => t(s === 'redeemed' ? 'operator_code_redeemed' : s === 'expired' ? 'operator_code_expired' : 'operator_code_unused');

/** The codes just issued as CSV (UTF-8 with a byte-order mark), the one copy there will be. */
function issuedCsv(t: OpsT, issued: OpsIssuedCodes): Blob {
  const head = [t('operator_codes'), t('operator_col_amount'), t('operator_col_expires')].join(',');
  const rows = issued.items.map((c) => [c.code, (c.amount / 100).toFixed(2), c.expires_at ?? ''].join(','));
  return new Blob(['\ufeff', [head, ...rows].join('\r\n'), '\r\n'], { type: 'text/csv;charset=utf-8' });
}

export default function CodesPage() {
  const t = useOpsT();
  const [filter, setFilter] = useState<State>('');
  const [nonce, setNonce] = useState(0);
  const state = useAsync((signal) => fetchCodes(filter, 0, signal), [filter, nonce]);
  const [issued, setIssued] = useState<OpsIssuedCodes | null>(null);
  const [exporting, setExporting] = useState(false);
  const exportCsv = async () => {
    setExporting(true);
    try {
      saveBlob(await fetchCodesCsv(filter), 'topup-codes.csv');
    } catch {
      toast('error', t('operator_codes_csv_failed'));
    } finally {
      setExporting(false);
    }
  };
  return (
    <div className="page operator-codes">
      <PageHeader title={t('operator_codes')} subtitle={t('operator_codes_hint')} />
      <IssueForm
        onIssued={(i) => {
          setIssued(i);
          setNonce((n) => n + 1);
        }}
      />
      <Section id="operator-codes-list" title={t('operator_codes_list')}>
        <div className="row-actions operator-codes-tools">
          <SelectField<State>
            id="operator-code-state"
            label={t('operator_col_status')}
            value={filter}
            onChange={setFilter}
            options={[
              ['', t('operator_codes_all')],
              ['unused', t('operator_code_unused')],
              ['redeemed', t('operator_code_redeemed')],
              ['expired', t('operator_code_expired')],
            ]}
          />
          <button type="button" className="button small ghost" data-csv="codes" onClick={exportCsv} disabled={exporting}>
            <Icon name="download" size={14} /> {t('operator_codes_csv')}
          </button>
        </div>
        <AsyncItems state={state} emptyIcon="wallet" emptyTitle={t('operator_codes_none')}>
          {(items) => (
            <div className="table-wrap">
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">{t('operator_col_ends_with')}</th>
                    <th scope="col">{t('operator_col_amount')}</th>
                    <th scope="col">{t('operator_col_status')}</th>
                    <th scope="col">{t('operator_col_issued')}</th>
                    <th scope="col">{t('operator_col_expires')}</th>
                    <th scope="col">{t('operator_col_redeemed_by')}</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((c) => (
                    <tr key={c.id} data-hint={c.hint ?? ''} data-state={c.state}>
                      <td>
                        <code>{c.hint ? `…${c.hint}` : '—'}</code>
                      </td>
                      <td>{formatCoins(c.amount)}</td>
                      <td>
                        <span className={c.state === 'unused' ? 'tag' : c.state === 'expired' ? 'tag danger' : 'tag muted'}>{stateLabel(t, c.state)}</span>
                      </td>
                      <td>{formatDateTime(c.created_at)}</td>
                      <td>{c.expires_at ? formatDate(c.expires_at) : t('operator_never')}</td>
                      <td>{c.redeemed_by ? `${c.redeemed_by} · ${formatDateTime(c.redeemed_at)}` : ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </AsyncItems>
        <LoadMore state={state} fetchPage={(offset) => fetchCodes(filter, offset)} />
      </Section>
      {issued ? <IssuedDialog issued={issued} onClose={() => setIssued(null)} /> : null}
    </div>
  );
}

function IssueForm({ onIssued }: { onIssued: (i: OpsIssuedCodes) => void }) {
  const t = useOpsT();
  const [amount, setAmount] = useState('');
  const [howMany, setHowMany] = useState('1');
  const [day, setDay] = useState('');
  const key = useRef({ typed: '', key: newKey() });
  const form = useForm<'amount' | 'count' | 'expires'>({
    validate: () => ({
      amount: parseCoins(amount) === null ? 'operator_amount_invalid' : null,
      count: count(howMany) === null ? 'operator_number_invalid' : null,
    }),
    action: async () => {
      const cents = parseCoins(amount) ?? 0;
      const typed = `${cents}|${howMany}|${day}`;
      // A retry of the same submission (a lost answer) issues once; a new one gets a new key.
      if (key.current.typed !== typed) key.current = { typed, key: newKey() };
      onIssued(await issueCodes(cents, count(howMany) ?? 1, endOfDay(day), key.current.key));
      key.current = { typed: '', key: newKey() };
    },
    serverFields: { amount: 'amount', count: 'count', expires_at: 'expires' },
  });
  return (
    <form className="card form-card operator-issue" onSubmit={form.submit} noValidate>
      <h2>{t('operator_issue')}</h2>
      <div className="operator-issue-fields">
        <Field label={t('operator_code_amount')} name="amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} error={form.error('amount')} hint={t('operator_amount_hint')} />
        <Field label={t('operator_code_count')} name="count" inputMode="numeric" value={howMany} onChange={(e) => setHowMany(e.target.value)} error={form.error('count')} hint={t('operator_code_count_hint')} />
        <Field label={t('operator_code_expires')} name="expires" type="date" value={day} onChange={(e) => setDay(e.target.value)} error={form.error('expires')} />
      </div>
      <FormError form={form} />
      <div className="row-actions">
        <SubmitButton form={form}>{t('operator_issue')}</SubmitButton>
      </div>
    </form>
  );
}

function IssuedDialog({ issued, onClose }: { issued: OpsIssuedCodes; onClose: () => void }) {
  const t = useOpsT();
  const text = issued.items.map((c) => c.code).join('\n');
  return (
    <Dialog open title={t('operator_issued_title', { n: issued.items.length })} onClose={onClose}>
      <p>{t('operator_issued_text')}</p>
      <pre className="operator-issued" data-testid="issued-codes">
        {text}
      </pre>
      <div className="row-actions">
        <button type="button" className="button" onClick={() => saveBlob(issuedCsv(t, issued), `topup-codes-${issued.batch}.csv`)}>
          <Icon name="download" size={14} /> {t('operator_issued_download')}
        </button>
        <button type="button" className="button ghost" onClick={() => void copyText(text).then((ok) => ok && toast('success', t('copied')))}>
          {t('copy')}
        </button>
        <button type="button" className="button ghost" onClick={onClose}>
          {t('operator_close')}
        </button>
      </div>
    </Dialog>
  );
}
