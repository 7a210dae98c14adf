import { useState } from 'react';
import { endZcloudRental, fetchZcloudRentals } from '../../api/devices';
import type { ZcloudRental } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { ConfirmDialog } from '../../components/Dialog';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { formatCoins, formatDateTime, formatNumber } from '../../lib/format';
import { toast, toastFailure } from '../../stores/feedback';

/** The Z-CLOUD machines other owners rent on this server group, with End (notice, then stop). */
export function HostRentals({ hostId }: { hostId: string }) {
  const t = useT();
  const state = useAsync((signal) => fetchZcloudRentals(hostId, signal), [hostId]);
  const [ending, setEnding] = useState<ZcloudRental | null>(null);
  const [busy, setBusy] = useState(false);
  const end = () => {
    if (!ending) return;
    setBusy(true);
    toastFailure(async () => {
      await endZcloudRental(hostId, ending.machine_id);
      toast('success', t('zcloud_rental_end_sent'));
      state.reload();
    }).finally(() => {
      setBusy(false);
      setEnding(null);
    });
  };
  const rows = state.data ?? [];
  return (
    <section className="card device-apps" data-testid="host-rentals">
      <h2>{t('zcloud_rentals_title')}</h2>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !state.data ? (
        <SkeletonLines lines={2} />
      ) : rows.length === 0 ? (
        <p className="muted">{t('zcloud_rentals_none')}</p>
      ) : (
        <ul className="plain-list">
          {rows.map((r) => (
            <li key={r.machine_id} data-testid="host-rental">
              <strong>{r.name}</strong>{' '}
              <span className="muted">
                {t('zcloud_rental_line', {
                  cores: formatNumber(r.cpu_cores),
                  price: formatCoins(r.price_per_hour),
                  billed: formatCoins(r.billed),
                })}
              </span>{' '}
              {r.status === 'ending' && r.stop_at ? (
                <span className="badge">{t('zcloud_rental_stops_at', { time: formatDateTime(r.stop_at) })}</span>
              ) : (
                <button type="button" className="button danger" onClick={() => setEnding(r)}>
                  {t('zcloud_rental_end')}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog
        open={ending !== null}
        title={t('zcloud_rental_end')}
        text={t('zcloud_rental_end_confirm')}
        danger
        busy={busy}
        onConfirm={end}
        onClose={() => setEnding(null)}
      />
    </section>
  );
}
