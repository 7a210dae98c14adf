// /app's "Kept data" (issue 40): the snapshots whose installation is gone: the data kept when a
// rental ended (until `expires_at`) and the snapshots of removed apps, each with Restore, Download
// and Delete, so a renter whose rental ended finds their data. Shown only when there is some.
import { useCallback, useEffect, useRef } from 'react';
import { fetchSnapshots } from '../../api/snapshots';
import type { Snapshot } from '../../api/types';
import { POLLING_DEFAULT_INTERVAL_MS } from '../../constants';
import { useAsync } from '../../lib/useAsync';
import { useInterval } from '../../lib/timing';
import { useSession } from '../../stores/session';
import { Section } from '../../components/sections';
import { SnapshotList } from './snapshotList';
import { isSnapBusy, useSnapT } from './snapshotText';

const LIMIT = 100;

/** The snapshots whose installation is gone: kept after a rental ended, or of a removed app. */
export const keptSnapshots = (all: Snapshot[]) => all.filter((s) => s.kind === 'ended' || !s.installation_present);

/** `listed`: the installations the page lists (their ids), once loaded; a change reads the list
 * again (an app uninstalled on the page leaves its snapshots here). */
export function KeptData({ listed }: { listed: string | undefined }) {
  const t = useSnapT();
  const member = useSession((s) => s.userType === 'member');
  const smeId = useSession((s) => s.smeId);
  const snaps = useAsync(member ? null : (signal) => fetchSnapshots({ limit: LIMIT }, signal), [smeId, member]);
  const { setData, refresh } = snaps;
  const seen = useRef(listed);
  useEffect(() => {
    if (seen.current !== undefined && listed !== undefined && listed !== seen.current) refresh();
    if (listed !== undefined) seen.current = listed;
  }, [listed, refresh]);
  const kept = keptSnapshots(snaps.data?.items ?? []);
  const busy = kept.some(isSnapBusy);
  const tick = useCallback(() => {
    if (busy) refresh();
  }, [busy, refresh]);
  useInterval(tick, POLLING_DEFAULT_INTERVAL_MS);
  if (member || !kept.length) return null;
  const changed = (next: Snapshot) => setData((d) => (d ? { ...d, items: d.items.map((s) => (s.id === next.id ? next : s)) } : d));
  const removedOne = (id: string) => setData((d) => (d ? { ...d, items: d.items.filter((s) => s.id !== id), total: Math.max(0, d.total - 1) } : d));
  return (
    <Section id="kept-data" title={t('kept_title')} className="card kept-data">
      <p className="muted small">{t('kept_hint')}</p>
      <SnapshotList items={kept} label={t('kept_title')} showApp onChanged={changed} onRemoved={removedOne} />
    </Section>
  );
}
