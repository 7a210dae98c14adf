// /app's "Kept data" (issue 40): the snapshots whose installation is gone: the data kept when a
// rental ended (until `expires_at`) and the snapshots of removed apps, each with Restore, Download
// and Delete, so a renter whose rental ended finds their data. Shown only when there is some.
import { useCallback } from 'react';
import { fetchInstallations } from '../../api/apps';
import { fetchSnapshots } from '../../api/snapshots';
import type { Installation, ListPage, Snapshot } from '../../api/types';
import { POLLING_DEFAULT_INTERVAL_MS } from '../../constants';
import { useAsync } from '../../lib/useAsync';
import { useInterval } from '../../lib/timing';
import { useSession } from '../../stores/session';
import { Section } from '../../components/sections';
import { SnapshotList } from './snapshotList';
import { isSnapBusy, useSnapT } from './snapshotText';

const LIMIT = 100;

/**
 * The snapshots of `all` whose installation is gone: kept after a rental ended, or whose
 * installation is not among the current ones (`current`: the caller's installations, when known
 * completely; otherwise only the kept-after-a-rental ones count).
 */
export function keptSnapshots(all: Snapshot[], current: ListPage<Installation> | undefined): Snapshot[] {
  const complete = current && current.items.length >= current.total;
  const live = new Set((current?.items ?? []).filter((i) => i.status !== 'not_install').map((i) => i.id));
  return all.filter((s) => s.kind === 'ended' || (complete && !live.has(s.installation_id)));
}

/** `current`: the page's list of current installations while it shows them; without it (`ended`
 * shown) they are fetched here. */
export function KeptData({ current, showsCurrent }: { current: ListPage<Installation> | undefined; showsCurrent: boolean }) {
  const t = useSnapT();
  const member = useSession((s) => s.userType === 'member');
  const smeId = useSession((s) => s.smeId);
  const snaps = useAsync(member ? null : (signal) => fetchSnapshots({ limit: LIMIT }, signal), [smeId, member]);
  const own = useAsync(member || showsCurrent ? null : (signal) => fetchInstallations({ limit: LIMIT }, signal), [smeId, member, showsCurrent]);
  const { setData, refresh } = snaps;
  const kept = keptSnapshots(snaps.data?.items ?? [], showsCurrent ? current : own.data);
  const busy = kept.some(isSnapBusy);
  const tick = useCallback(() => {
    if (busy) refresh();
  }, [busy, refresh]);
  useInterval(tick, POLLING_DEFAULT_INTERVAL_MS);
  if (member || !kept.length) return null;
  const changed = (next: Snapshot) => setData((d) => (d ? { ...d, items: d.items.map((s) => (s.id === next.id ? next : s)) } : d));
  const removed = (id: string) => setData((d) => (d ? { ...d, items: d.items.filter((s) => s.id !== id), total: Math.max(0, d.total - 1) } : d));
  return (
    <Section id="kept-data" title={t('kept_title')} className="card kept-data">
      <p className="muted small">{t('kept_hint')}</p>
      <SnapshotList items={kept} label={t('kept_title')} showApp onChanged={changed} onRemoved={removed} />
    </Section>
  );
}
