// What the device pages list and how they describe a device.
import type { Device, HostFree } from '../../api/types';
import { formatSize } from '../../lib/format';
import type { TFunction } from '../../lib/i18n';
import type { MessageKey } from '../../i18n';

/** How often the device pages refresh the live status. */
export const DEVICE_REFRESH_MS = 5000;

export const DEVICE_TYPES = ['Z-BOX', 'P-BOX', 'Z-CLOUD', 'server group'] as const satisfies readonly Device['type'][];
export const DEVICE_STATUSES = ['online', 'offline', 'creating', 'failed'] as const satisfies readonly Device['status'][];

export const MODE_KEYS: Record<Device['sharing_mode'], MessageKey> = {
  manual: 'mode_manual',
  autopilot: 'mode_autopilot',
  dedicated: 'mode_dedicated',
};

/** "8 cores · 15.50 GB · 476.94 GB" */
export function specText(t: TFunction, spec: Pick<Device['spec'], 'cpu_cores' | 'memory_bytes' | 'disk_bytes'> | undefined): string {
  if (!spec) return '-';
  return `${t('spec_cores', { n: spec.cpu_cores })} · ${formatSize(spec.memory_bytes)} · ${formatSize(spec.disk_bytes)}`;
}

export function hostFreeText(t: TFunction, h: HostFree): string {
  const gpus = h.gpus.filter((g) => g.count > 0).map((g) => `${g.name} ×${g.count}`);
  return [specText(t, h), ...gpus].join(' · ');
}
