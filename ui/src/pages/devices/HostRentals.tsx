import { useState } from 'react';
import { endZcloudRental, fetchZcloudRentals } from '../../api/devices';
import type { ZcloudRental } from '../../api/types';
import { useAction } from '../../lib/useAction';
import { useAsync } from '../../lib/useAsync';
import { useLang } from '../../lib/i18n';
import { ConfirmDialog } from '../../components/Dialog';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { formatCoins, formatDateTime, formatNumber } from '../../lib/format';
import { toast, toastError } from '../../stores/feedback';

// This lazily loaded page's own words (kept out of the first-load message tables).
const TEXT = {
  en: {
    title: 'Z-CLOUD machines rented on this server',
    none: 'Nobody else runs a machine on this server.',
    line: '{cores} cores · {price} coins/h · {billed} coins charged',
    end: 'End',
    confirm: 'The renter is told now, and the machine is stopped after the notice period; its rental is then settled.',
    sent: 'Notice given: the machine will be stopped',
    stops: 'Stops at {time}',
  },
  zh: {
    title: '在此服务器上租用的云主机',
    none: '没有其他人在此服务器上运行云主机。',
    line: '{cores} 核 · 每小时 {price} 币 · 已扣 {billed} 币',
    end: '结束',
    confirm: '将立即通知租用者，通知期过后停止该云主机，然后结算租用。',
    sent: '已发出通知：该云主机将被停止',
    stops: '将于 {time} 停止',
  },
};

function fill(text: string, params: Record<string, string>): string {
  return Object.keys(params).reduce((s, k) => s.split(`{${k}}`).join(params[k]), text);
}

/** The Z-CLOUD machines other owners rent on this server group, with End (notice, then stop). */
export function HostRentals({ hostId }: { hostId: string }) {
  const w = TEXT[useLang()];
  const state = useAsync((signal) => fetchZcloudRentals(hostId, signal), [hostId]);
  const [ending, setEnding] = useState<ZcloudRental | null>(null);
  const ender = useAction({ onError: toastError });
  const end = () => {
    if (!ending) return;
    void ender
      .run(async () => {
        await endZcloudRental(hostId, ending.machine_id);
        toast('success', w.sent);
        state.reload();
      })
      .then(() => setEnding(null));
  };
  const rows = state.data ?? [];
  return (
    <section className="card device-apps" data-testid="host-rentals">
      <h2>{w.title}</h2>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !state.data ? (
        <SkeletonLines lines={2} />
      ) : rows.length === 0 ? (
        <p className="muted">{w.none}</p>
      ) : (
        <ul className="plain-list">
          {rows.map((r) => (
            <li key={r.machine_id} data-testid="host-rental">
              <strong>{r.name}</strong>{' '}
              <span className="muted">
                {fill(w.line, {
                  cores: formatNumber(r.cpu_cores),
                  price: formatCoins(r.price_per_hour),
                  billed: formatCoins(r.billed),
                })}
              </span>{' '}
              {r.status === 'ending' && r.stop_at ? (
                <span className="muted" data-testid="host-rental-stops">{fill(w.stops, { time: formatDateTime(r.stop_at) })}</span>
              ) : (
                <button type="button" className="button danger" onClick={() => setEnding(r)}>
                  {w.end}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog
        open={ending !== null}
        title={w.end}
        text={w.confirm}
        danger
        busy={ender.busy}
        onConfirm={end}
        onClose={() => setEnding(null)}
      />
    </section>
  );
}
