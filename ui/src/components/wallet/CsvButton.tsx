// Downloads the wallet's entries or bills (as filtered) as CSV: UTF-8 with a byte-order mark, so
// spreadsheet programs read Chinese intact.
import { fetchCsv } from '../../api/wallet';
import { Icon } from '../Icon';
import { saveBlob } from '../../lib/download';
import { useT } from '../../lib/i18n';
import { useAction } from '../../lib/useAction';
import { toast } from '../../stores/feedback';

export function CsvButton({ what, filter }: { what: 'entries' | 'bills'; filter: string | null }) {
  const t = useT();
  const csv = useAction({ onError: () => toast('error', t('wallet_csv_failed')) });
  const download = () =>
    csv.run(async () => saveBlob(await fetchCsv(what, filter), what === 'entries' ? 'wallet-entries.csv' : 'wallet-bills.csv'));
  return (
    <button type="button" className="button small ghost wallet-csv" data-csv={what} onClick={download} disabled={csv.busy}>
      <Icon name="download" size={14} /> {t('wallet_csv')}
    </button>
  );
}
