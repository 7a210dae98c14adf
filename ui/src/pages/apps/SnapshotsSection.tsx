// The installation page's Snapshots section (issue 40): its snapshots (snapshotList.tsx), "Take a
// snapshot" (the installation's `snapshot` action), and the daily backup (on or off, how many are
// kept) of one's own app while it is installed. Read again every second while a snapshot is being
// made, kept on the market or restored. Not shown to a reader whose installation it is not (the
// list answers 403 or 404).
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { appAction } from '../../api/apps';
import { fetchInstallationSnapshots, saveBackups } from '../../api/snapshots';
import type { BackupSchedule, Installation, InstallationSnapshots, Snapshot } from '../../api/types';
import { POLLING_DEFAULT_INTERVAL_MS } from '../../constants';
import { useAsync } from '../../lib/useAsync';
import { useAction } from '../../lib/useAction';
import { useInterval } from '../../lib/timing';
import { toast } from '../../stores/feedback';
import { Field } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { ErrorNote, SkeletonLines } from '../../components/placeholders';
import { Section } from '../../components/sections';
import { SnapshotList } from './snapshotList';
import { isSnapBusy, useSnapT } from './snapshotText';

/** How many daily backups an installation may keep (the server's bounds). */
export const BACKUPS_KEEP_MIN = 1;
export const BACKUPS_KEEP_MAX = 30;

/** The typed number of backups to keep, or null when it is not a whole number from 1 to 30. */
export function parseKeep(typed: string): number | null {
  const text = typed.trim();
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return n >= BACKUPS_KEEP_MIN && n <= BACKUPS_KEEP_MAX ? n : null;
}

function BackupForm({ installationId, schedule, onSaved }: { installationId: string; schedule: BackupSchedule; onSaved: (next: BackupSchedule) => void }) {
  const t = useSnapT();
  const [enabled, setEnabled] = useState(schedule.enabled);
  const [keep, setKeep] = useState(String(schedule.keep));
  const [invalid, setInvalid] = useState(false);
  useEffect(() => {
    setEnabled(schedule.enabled);
    setKeep(String(schedule.keep));
  }, [schedule.enabled, schedule.keep]);
  const form = useForm<'keep'>({
    action: async () => {
      const saved = await saveBackups(installationId, { enabled, keep: parseKeep(keep)! });
      onSaved(saved);
      toast('success', t('snap_backups_saved'));
    },
    serverFields: { keep: 'keep' },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const bad = parseKeep(keep) === null;
    setInvalid(bad);
    if (!bad) form.submit();
  };
  return (
    <form className="snapshot-backups" onSubmit={submit} noValidate data-testid="backups-form">
      <h3>{t('snap_backups')}</h3>
      <label className="checkbox-row">
        <input type="checkbox" name="backups-enabled" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        <span>{t('snap_backups_on')}</span>
      </label>
      <Field
        label={t('snap_backups_keep')}
        type="number"
        inputMode="numeric"
        min={BACKUPS_KEEP_MIN}
        max={BACKUPS_KEEP_MAX}
        step={1}
        name="backups-keep"
        value={keep}
        hint={t('snap_backups_hint')}
        error={invalid ? t('snap_backups_keep_invalid') : form.error('keep')}
        onChange={(e) => {
          setKeep(e.target.value);
          setInvalid(false);
        }}
      />
      <FormError form={form} />
      <SubmitButton form={form} className="button small primary">
        {t('save')}
      </SubmitButton>
    </form>
  );
}

export function SnapshotsSection({ inst, onChanged }: { inst: Installation; onChanged: (next: Installation) => void }) {
  const t = useSnapT();
  const state = useAsync((signal) => fetchInstallationSnapshots(inst.id, signal), [inst.id]);
  const { setData, refresh } = state;
  const taking = useAction();
  const items = state.data?.items ?? [];
  const busy = items.some(isSnapBusy) || inst.status === 'snapshotting';
  const tick = useCallback(() => {
    if (busy) refresh();
  }, [busy, refresh]);
  useInterval(tick, POLLING_DEFAULT_INTERVAL_MS);
  // The installation leaving `snapshotting` settles its snapshot: read the list once more.
  const was = useRef(inst.status);
  useEffect(() => {
    if (was.current === 'snapshotting' && inst.status !== 'snapshotting') refresh();
    was.current = inst.status;
  }, [inst.status, refresh]);
  if (state.errorCode === 403 || state.errorCode === 404) return null;
  const edit = (update: (d: InstallationSnapshots) => InstallationSnapshots) => setData((d) => (d ? update(d) : d));
  const changed = (next: Snapshot) => edit((d) => ({ ...d, items: d.items.map((s) => (s.id === next.id ? next : s)) }));
  const removed = (id: string) => edit((d) => ({ ...d, items: d.items.filter((s) => s.id !== id), total: Math.max(0, d.total - 1) }));
  const canTake = inst.actions.includes('snapshot');
  const take = () =>
    taking.run(async () => {
      onChanged(await appAction(inst.id, 'snapshot'));
      refresh();
    });
  return (
    <Section id="app-snapshots" title={t('snap_title')} className="snapshots-section">
      <p className="muted small">{t('snap_hint')}</p>
      <div className="snapshot-toolbar">
        {canTake ? (
          <button type="button" className="button small primary" disabled={taking.busy} onClick={() => void take()}>
            {t('snap_take')}
          </button>
        ) : (
          <p className="muted small" data-testid="snapshot-unavailable">
            {t('snap_take_unavailable')}
          </p>
        )}
      </div>
      {taking.error ? (
        <p className="form-error" role="alert">
          {taking.error}
        </p>
      ) : null}
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines lines={2} />
      ) : items.length ? (
        <SnapshotList items={items} label={t('snap_list', { name: inst.app_name })} onChanged={changed} onRemoved={removed} />
      ) : !state.error ? (
        <p className="muted" data-testid="snapshots-empty">
          {t('snap_empty')}
        </p>
      ) : null}
      {state.data && inst.kind !== 'rent' && inst.status !== 'not_install' ? (
        <BackupForm installationId={inst.id} schedule={state.data.backups} onSaved={(backups) => edit((d) => ({ ...d, backups }))} />
      ) : null}
    </Section>
  );
}
