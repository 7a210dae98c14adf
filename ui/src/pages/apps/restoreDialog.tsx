// Restore a snapshot: pick one of one's devices from the install dialog's device-fit list (how each
// fits the app, what it lacks), restore, then follow the new installation to its page. A refusal
// shows the server's message, and the gaps of a box that does not fit in words.
import { useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { fetchDeviceFit } from '../../api/apps';
import { restoreSnapshot } from '../../api/snapshots';
import type { Gap, Snapshot } from '../../api/types';
import { ApiError } from '../../lib/http';
import { formatDateTime } from '../../lib/format';
import { paths, usePublicPaths } from '../../lib/paths';
import { useAction } from '../../lib/useAction';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { Dialog } from '../../components/Dialog';
import { ActionError } from '../../components/form';
import { DevicePicker, gapsText } from '../../components/apps/devicePicker';
import { useSnapT } from './snapshotText';

const newKey = () => `restore-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

/** The gaps a refused restore names (`data.gaps` of a 409), none when it names none. */
export function refusalGaps(cause: unknown): Gap[] {
  if (!(cause instanceof ApiError) || !cause.data || typeof cause.data !== 'object') return [];
  const gaps = (cause.data as { gaps?: unknown }).gaps;
  return Array.isArray(gaps) ? (gaps as Gap[]).filter((g) => g && typeof g.field === 'string') : [];
}

/** Open while `snapshot` is set; key it by the snapshot so a new one starts with a fresh choice. */
export function RestoreDialog({ snapshot, onClose }: { snapshot: Snapshot | null; onClose: () => void }) {
  const t = useSnapT();
  const appT = useT();
  const p = usePublicPaths();
  const navigate = useNavigate();
  const open = snapshot !== null;
  const fits = useAsync(snapshot ? (signal) => fetchDeviceFit(snapshot.app_id, signal) : null, [snapshot?.app_id]);
  const [chosen, setChosen] = useState('');
  const restoring = useAction();
  const pick = chosen || fits.data?.find((f) => f.fits)?.device_id || '';
  // One Idempotency-Key per asked restore (snapshot and device): a retried request restores once.
  const key = useRef({ device: '', key: '' });
  if (!snapshot) return null;
  const gaps = refusalGaps(restoring.cause);
  const restore = () =>
    restoring.run(async () => {
      if (key.current.device !== pick || !key.current.key) key.current = { device: pick, key: newKey() };
      const inst = await restoreSnapshot(snapshot.id, pick, key.current.key);
      onClose();
      navigate(p.appDetails(inst.id));
    });
  return (
    <Dialog
      open={open}
      title={t('snap_restore_title', { name: snapshot.app_name })}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
          <button type="button" className="button primary" disabled={!pick || restoring.busy} onClick={() => void restore()}>
            {t('snap_restore')}
          </button>
        </>
      }
    >
      <p className="muted">{t('snap_restore_text', { name: snapshot.app_name, version: snapshot.version, date: formatDateTime(snapshot.created_at) })}</p>
      <DevicePicker
        state={fits}
        empty={
          <>
            {t('install_no_devices')} <Link to={paths.console.link()}>{t('link_device')}</Link>
          </>
        }
        legend={t('pick_device')}
        name="restore-device"
        picked={pick}
        onPick={setChosen}
        label={(f) => (
          <>
            {f.device_name} <span className="mono muted">{f.device_id}</span>
          </>
        )}
      />
      {fits.data?.some((f) => f.reason === 'installed') ? (
        <p className="muted small restore-hint" data-testid="restore-installed-hint">
          {t('snap_restore_installed_hint', { name: snapshot.app_name })}
        </p>
      ) : null}
      <ActionError action={restoring} />
      {gaps.length ? (
        <p className="field-error" data-testid="restore-gaps">
          {t('snap_restore_gaps', { gaps: gapsText(appT, gaps) })}
        </p>
      ) : null}
    </Dialog>
  );
}
