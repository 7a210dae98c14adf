// A list of snapshots (the installation page's Snapshots section, /app's "Kept data"): each with
// its time, version, size, kind, where it is kept, its state (progress while it is being made or
// kept on the market; the reason of a failure, its copy's to the market too), and the actions its state allows: Keep on the
// market, Download (only from the market: said so while it is only on the box), Restore (a
// dialog) and Delete (asks first). A refusal shows in the row.
import { useState } from 'react';
import { deleteSnapshot, keepOnMarket, snapshotDownloadLink } from '../../api/snapshots';
import type { Snapshot } from '../../api/types';
import { formatDate, formatDateTime, formatSize } from '../../lib/format';
import { saveLink } from '../../lib/download';
import { useAction } from '../../lib/useAction';
import { toast } from '../../stores/feedback';
import { ConfirmDialog } from '../../components/Dialog';
import { AppIcon } from '../../components/apps/cards';
import { RestoreDialog } from './restoreDialog';
import { isSnapBusy, snapKindText, snapState, snapStateText, snapWhereText, useSnapT, type SnapState } from './snapshotText';

const TONES: Record<SnapState, string> = { creating: 'busy', uploading: 'busy', restoring: 'busy', ready: 'ok', failed: 'bad' };

/** The file name of a download whose answer names none: `grafana-1.2.0-20260102-1030.tar.zst`. */
export function snapshotFileName(s: Pick<Snapshot, 'app_id' | 'version' | 'created_at'>): string {
  const stamp = formatDateTime(s.created_at).replace(/[-:]/g, '').replace(' ', '-');
  return `${s.app_id}-${s.version || 'snapshot'}-${stamp}.tar.zst`.replace(/[^\w.-]+/g, '_');
}

function SnapshotProgress({ value }: { value: number }) {
  const t = useSnapT();
  const v = Math.max(0, Math.min(100, Math.round(value)));
  return (
    <div className="app-progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={v} aria-label={t('progress')}>
      <div className="app-progress-fill" style={{ width: `${v}%` }} />
      <span className="app-progress-text">{v}%</span>
    </div>
  );
}

function SnapshotRow({
  s,
  showApp,
  onChanged,
  onRemoved,
  onRestore,
}: {
  s: Snapshot;
  showApp: boolean;
  onChanged: (next: Snapshot) => void;
  onRemoved: (id: string) => void;
  onRestore: (s: Snapshot) => void;
}) {
  const t = useSnapT();
  const acting = useAction();
  const fetching = useAction();
  const [asking, setAsking] = useState(false);
  const state = snapState(s);
  const ready = state === 'ready';
  const onMarket = s.where === 'market';
  const when = formatDateTime(s.created_at);
  const keep = () => acting.run(async () => onChanged(await keepOnMarket(s.id)));
  const download = () =>
    fetching.run(async () => {
      // The browser's own download (to disk, resumable), never the page's memory: archives are large.
      const link = await snapshotDownloadLink(s.id);
      saveLink(link.url, snapshotFileName(s));
    });
  const remove = () =>
    acting.run(async () => {
      setAsking(false);
      await deleteSnapshot(s.id);
      onRemoved(s.id);
      toast('success', t('snap_deleted'));
    });
  return (
    <li className="snapshot-row" data-snapshot={s.id} data-state={state}>
      {showApp ? <AppIcon app={{ icon_url: s.icon_url ?? '', name: s.app_name }} size={40} /> : null}
      <div className="snapshot-main">
        <div className="snapshot-title">
          {showApp ? <span className="snapshot-app">{s.app_name}</span> : null}
          <span className="mono" data-testid="snapshot-time">
            {when}
          </span>
          <span className="muted mono" data-testid="snapshot-version">
            {s.version}
          </span>
          {s.size > 0 ? (
            <span className="muted mono" data-testid="snapshot-size">
              {formatSize(s.size)}
            </span>
          ) : null}
        </div>
        <div className="snapshot-facts">
          <span className="tag" data-testid="snapshot-kind">
            {snapKindText(t, s.kind)}
          </span>
          <span className="tag" data-testid="snapshot-where" data-where={s.where}>
            {snapWhereText(t, s)}
          </span>
          {showApp && s.device_name ? <span className="muted small">{s.device_name}</span> : null}
          {s.expires_at ? (
            <span className="muted small" data-testid="snapshot-expires">
              {t('snap_expires', { date: formatDate(s.expires_at) })}
            </span>
          ) : null}
        </div>
        {state === 'failed' || s.reason ? (
          <p className="app-reason" data-reason={s.reason_code ?? ''}>
            {s.reason || t('snap_failed_unknown')}
          </p>
        ) : null}
        {isSnapBusy(s) && s.progress !== null && s.progress !== undefined ? <SnapshotProgress value={s.progress} /> : null}
        {ready && !onMarket ? <p className="muted small">{t('snap_download_box_only')}</p> : null}
        {acting.error || fetching.error ? (
          <p className="app-reason" role="alert">
            {acting.error ?? fetching.error}
          </p>
        ) : null}
      </div>
      <span className={`app-status app-status-${TONES[state]}`} data-testid="snapshot-status" data-status={state}>
        {snapStateText(t, state)}
      </span>
      <div className="app-actions">
        {ready && !onMarket ? (
          <button type="button" className="button small ghost" disabled={acting.busy} onClick={() => void keep()}>
            {t('snap_keep')}
          </button>
        ) : null}
        {s.status === 'ready' && onMarket ? (
          <button type="button" className="button small ghost" disabled={fetching.busy} onClick={() => void download()}>
            {fetching.busy ? t('snap_downloading') : t('snap_download')}
          </button>
        ) : null}
        {ready ? (
          <button type="button" className="button small primary" disabled={acting.busy} onClick={() => onRestore(s)}>
            {t('snap_restore')}
          </button>
        ) : null}
        <button type="button" className="button small danger" disabled={acting.busy || s.restoring} onClick={() => setAsking(true)}>
          {t('snap_delete')}
        </button>
      </div>
      <ConfirmDialog
        open={asking}
        title={t('snap_delete_title')}
        text={t('snap_delete_text', { name: s.app_name, date: when })}
        confirmLabel={t('snap_delete')}
        danger
        busy={acting.busy}
        onConfirm={() => void remove()}
        onClose={() => setAsking(false)}
      />
    </li>
  );
}

/** The rows, and the Restore dialog of the one being restored. `showApp`: each row names its app
 * and box (a list across installations). */
export function SnapshotList({
  items,
  label,
  showApp = false,
  onChanged,
  onRemoved,
}: {
  items: Snapshot[];
  label: string;
  showApp?: boolean;
  onChanged: (next: Snapshot) => void;
  onRemoved: (id: string) => void;
}) {
  const [restoring, setRestoring] = useState<Snapshot | null>(null);
  return (
    <>
      <ul className="snapshot-list" aria-label={label}>
        {items.map((s) => (
          <SnapshotRow key={s.id} s={s} showApp={showApp} onChanged={onChanged} onRemoved={onRemoved} onRestore={setRestoring} />
        ))}
      </ul>
      <RestoreDialog key={restoring?.id ?? ''} snapshot={restoring} onClose={() => setRestoring(null)} />
    </>
  );
}
