// A device's status and GPUs as the device pages and the public nearby pages show them.
import type { NearbyDevice } from '../../api/types';
import { formatSize, gpuCount } from '../../lib/format';
import { useT, type TFunction } from '../../lib/i18n';
import type { MessageKey } from '../../i18n';

export type ShownStatus = 'online' | 'offline' | 'creating' | 'failed';

const STATUS_KEYS: Record<ShownStatus, MessageKey> = {
  online: 'status_online',
  offline: 'status_offline',
  creating: 'status_creating',
  failed: 'status_failed',
};

/**
 * online, creating (and, for the owner's pages, failed) as they are; anything else (unknown) is
 * shown as offline (docs/product.md §4). The public nearby pages show no failures.
 */
export function shownStatus(status: string, showFailed = true): ShownStatus {
  if (status === 'online' || status === 'creating' || (showFailed && status === 'failed')) return status;
  return 'offline';
}

export function statusLabel(t: TFunction, status: string, showFailed = true): string {
  return t(STATUS_KEYS[shownStatus(status, showFailed)]);
}

/** A device type (Z-BOX, P-BOX, Z-CLOUD are names; "server group" is translated). */
export function deviceTypeLabel(t: TFunction, type: string): string {
  const key = `devtype_${type.toLowerCase().replace(/[^a-z0-9]+/g, '_')}` as MessageKey;
  const text = t(key);
  return text === key ? type : text;
}

export function StatusBadge({ status, showFailed = true }: { status: string; showFailed?: boolean }) {
  const t = useT();
  return <span className={`status status-${shownStatus(status, showFailed)}`}>{statusLabel(t, status, showFailed)}</span>;
}

/** Names in their first order, a repeated one once with its count: "NVIDIA H200 ×8, RTX 4090". */
export function groupNames(names: string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => (c > 1 ? `${n} ×${c}` : n)).join(', ');
}

/** docs/product.md §3's GPU forms: a list of entries, a byte count or a name. */
export function gpuText(t: TFunction, gpus: NearbyDevice['gpus']): string {
  if (Array.isArray(gpus)) {
    if (!gpus.length) return t('no_gpu');
    return groupNames(gpus.map((g) => (g.vram ? `${g.name} (${formatSize(g.vram)})` : g.name)));
  }
  const n = gpuCount(gpus);
  if (!n) return t('no_gpu');
  return typeof gpus === 'string' ? gpus : formatSize(gpus as number);
}
