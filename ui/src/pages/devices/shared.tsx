import { useEffect } from 'react';
import type { TFunction } from '../../lib/i18n';
import { formatSize } from '../../lib/format';
import type { Device, HostFree } from '../../api/types';
import type { MessageKey } from '../../i18n';

/** How often the device pages refresh the live status. */
export const DEVICE_REFRESH_MS = 5000;

export const DEVICE_TYPES = ['Z-BOX', 'P-BOX', 'Z-CLOUD', 'server group'] as const;
export const DEVICE_STATUSES = ['online', 'offline', 'creating', 'failed'] as const;

export const MODE_KEYS: Record<string, MessageKey> = {
  manual: 'mode_manual',
  autopilot: 'mode_autopilot',
  dedicated: 'mode_dedicated',
};

/** online, creating and failed as they are; anything else (unknown) is shown as offline (SPEC.md §4). */
export function shownStatus(status: string): 'online' | 'offline' | 'creating' | 'failed' {
  return status === 'online' || status === 'creating' || status === 'failed' ? status : 'offline';
}

export function deviceStatusLabel(t: TFunction, status: string): string {
  const s = shownStatus(status);
  if (s === 'online') return t('status_online');
  if (s === 'creating') return t('status_creating');
  if (s === 'failed') return t('status_failed');
  return t('status_offline');
}

export function StatusBadge({ t, status }: { t: TFunction; status: string }) {
  const s = shownStatus(status);
  return <span className={`status status-${s}`}>{deviceStatusLabel(t, status)}</span>;
}

/** "8 cores · 15.50 GB · 476.94 GB" */
export function specText(t: TFunction, spec: Device['spec'] | undefined): string {
  if (!spec) return '-';
  return `${t('spec_cores', { n: spec.cpu_cores })} · ${formatSize(spec.memory_bytes)} · ${formatSize(spec.disk_bytes)}`;
}

export function hostFreeText(t: TFunction, h: HostFree): string {
  const gpus = h.gpus.filter((g) => g.count > 0).map((g) => `${g.name} ×${g.count}`);
  return [specText(t, { cpu_cores: h.cpu_cores, memory_bytes: h.memory_bytes, disk_bytes: h.disk_bytes, gpus: [] }), ...gpus].join(' · ');
}

/** Calls `tick` every `ms` while the page is visible (live status). */
export function useInterval(tick: () => void, ms: number) {
  useEffect(() => {
    const id = window.setInterval(() => {
      if (document.visibilityState === 'visible') tick();
    }, ms);
    return () => window.clearInterval(id);
  }, [tick, ms]);
}
