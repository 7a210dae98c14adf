// An installation's status chip, install progress and the actions its state allows (the /app
// pages and the device page's "Installed apps" panel).
import { useCallback, useState } from 'react';
import { appAction } from '../../api/apps';
import type { Installation } from '../../api/types';
import { useT, type TFunction } from '../../lib/i18n';
import type { MessageKey } from '../../i18n';
import { toastError } from '../../stores/feedback';
import { useInterval } from '../../lib/timing';
import { useAction } from '../../lib/useAction';
import { POLLING_DEFAULT_INTERVAL_MS } from '../../constants';
import { ConfirmDialog } from '../Dialog';
import { OpenAppButton } from './connect';

/** How often a running rental's meter is read again (the server posts it every 15 s). */
const METER_POLL_MS = 5_000;

/** States a command is under way in: the page polls while any is shown. */
const TRANSITIONAL = new Set([
  'preparing', 'downloading', 'installing', 'installed', 'starting', 'stopping', 'restarting', 'suspending',
  'resuming', 'snapshotting', 'updating', 'uninstalling', 'deleting', 'shutting_down',
]);
const FAILED = new Set(['failed', 'install_failed', 'uninstall_failed', 'rent_failed']);

export const isTransitional = (status: string) => TRANSITIONAL.has(status);

export function appStatusLabel(t: TFunction, status: string): string {
  const key = `app_status_${status}` as MessageKey;
  const text = t(key);
  return text === key ? status : text;
}

function tone(status: string): string {
  if (status === 'running') return 'ok';
  if (FAILED.has(status)) return 'bad';
  if (TRANSITIONAL.has(status)) return 'busy';
  return 'idle';
}

export function AppStatusChip({ status }: { status: string }) {
  const t = useT();
  return (
    <span className={`app-status app-status-${tone(status)}`} data-status={status}>
      {appStatusLabel(t, status)}
    </span>
  );
}

/** The install's progress bar while downloading or installing. */
export function AppProgress({ inst }: { inst: Pick<Installation, 'status' | 'progress'> }) {
  const t = useT();
  if (inst.progress === null || inst.progress === undefined) return null;
  return (
    <div className="app-progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={inst.progress} aria-label={t('progress')}>
      <div className="app-progress-fill" style={{ width: `${inst.progress}%` }} />
      <span className="app-progress-text">{inst.progress}%</span>
    </div>
  );
}

/** Polls `refresh` while any of `items` is in a transitional state (or while `also`: a running
 * rental's meter moves). */
export function usePollWhileBusy(items: Pick<Installation, 'status'>[], refresh: () => void, also = false) {
  const moving = items.some((i) => isTransitional(i.status));
  const busy = also || moving;
  const tick = useCallback(() => {
    if (busy) refresh();
  }, [busy, refresh]);
  useInterval(tick, moving ? POLLING_DEFAULT_INTERVAL_MS : METER_POLL_MS);
}

const ACTION_KEYS: Record<string, MessageKey> = {
  start: 'act_start',
  stop: 'act_stop',
  restart: 'act_restart',
  suspend: 'act_suspend',
  resume: 'act_resume',
  snapshot: 'act_snapshot',
  retry: 'act_retry',
  uninstall: 'act_uninstall',
  cancel: 'act_cancel',
  update: 'act_update',
};

/** Actions that ask first: what removes, gives up or replaces something. */
const ASKS_FIRST = new Set(['uninstall', 'cancel', 'update']);

/** What is worth knowing beside the status: the box is offline, a newer version exists. */
export function AppBadges({ inst }: { inst: Pick<Installation, 'device_online' | 'update_available' | 'status'> }) {
  const t = useT();
  return (
    <>
      {!inst.device_online && inst.status !== 'not_install' ? (
        <span className="app-status app-status-bad" data-testid="device-offline">
          {t('device_offline')}
        </span>
      ) : null}
      {inst.update_available ? (
        <span className="app-status app-status-busy" data-testid="update-available">
          {t('update_available', { version: inst.update_available })}
        </span>
      ) : null}
    </>
  );
}

/** The Open link and a button per action the state allows the reader; removing, cancelling
 * and updating ask first. `omit`: actions the page offers elsewhere (the installation page's
 * Snapshots section takes snapshots). */
export function AppActions({ inst, onChanged, omit }: { inst: Installation; onChanged: (next: Installation) => void; omit?: string[] }) {
  const t = useT();
  const acting = useAction({ onError: toastError });
  const [asking, setAsking] = useState<string | null>(null);
  const run = (action: string) => acting.run(async () => onChanged(await appAction(inst.id, action))).then(() => setAsking(null));
  const removal = inst.status.endsWith('failed') || inst.status === 'failed' || !inst.device_online;
  // Ending a rental says so: it stops the meter and releases the hold (issue 44 item 8).
  const rental = inst.kind === 'rent';
  const label = (a: string) =>
    a === 'uninstall' && rental
      ? t('act_end_rental')
      : a === 'uninstall' && removal
        ? t('act_remove')
        : t(ACTION_KEYS[a] ?? 'act_start', { version: inst.update_available ?? '' });
  const dialog =
    asking === 'cancel'
      ? { title: t('cancel_title'), text: t('cancel_text', { name: inst.app_name }), danger: true }
      : asking === 'update'
        ? { title: t('update_title', { name: inst.app_name }), text: t('update_text', { version: inst.update_available ?? '' }), danger: false }
        : rental
          ? { title: t('act_end_rental'), text: t('end_rental_text', { name: inst.app_name }), danger: true }
          : { title: t('uninstall_title'), text: t('uninstall_text', { name: inst.app_name }), danger: true };
  return (
    <div className="app-actions">
      {inst.openable && inst.device_online ? <OpenAppButton id={inst.id} /> : null}
      {inst.actions.filter((a) => !omit?.includes(a)).map((a) => (
        <button
          key={a}
          type="button"
          className={`button small ${a === 'uninstall' || a === 'cancel' ? 'danger' : a === 'update' ? 'primary' : 'ghost'}`}
          disabled={acting.busy}
          data-action={a}
          onClick={() => (ASKS_FIRST.has(a) ? setAsking(a) : run(a))}
        >
          {label(a)}
        </button>
      ))}
      <ConfirmDialog
        open={asking !== null}
        title={dialog.title}
        text={dialog.text}
        confirmLabel={asking === 'cancel' ? t('act_give_up') : asking ? label(asking) : ''}
        danger={dialog.danger}
        busy={acting.busy && asking !== null}
        onConfirm={() => asking && run(asking)}
        onClose={() => setAsking(null)}
      />
    </div>
  );
}
