// Demands and orders shown to people: an order's status chip, a demand's terms in words, and the
// matcher's gaps in words (the board, the signed-in page).
import type { Gap, Order } from '../../api/types';
import { useT, type TFunction } from '../../lib/i18n';
import type { MessageKey } from '../../i18n';
import { formatCoins, formatDateTime, formatSize } from '../../lib/format';

const TONE: Record<string, string> = {
  order_pending: 'idle',
  order_processing: 'busy',
  order_accepted: 'busy',
  order_confirmed: 'ok',
  order_finished: 'idle',
  order_failed: 'bad',
};

export function OrderStatusChip({ status }: { status: string }) {
  const t = useT();
  return (
    <span className={`app-status app-status-${TONE[status] ?? 'idle'}`} data-status={status}>
      {t(status as MessageKey)}
    </span>
  );
}

const show = (v: Gap['need'] | Gap['have'], bytes: boolean) => (bytes && typeof v === 'number' ? formatSize(v) : String(v));

/** One gap of the matcher in words. */
export function gapText(t: TFunction, g: Gap): string {
  const bytes = g.field.endsWith('_bytes');
  const params = { need: show(g.need, bytes), have: g.have === null ? '' : show(g.have, bytes) };
  switch (g.field) {
    case 'status':
      return t('gap_status', { need: t('status_online'), have: t(`status_${g.have}` as MessageKey) });
    case 'distance_km':
      return g.have === null ? t('gap_distance_unknown', params) : t('gap_distance_km', params);
    case 'gpu_models':
      return t('gap_gpu_models', { ...params, have: g.have === null ? t('gap_no_gpu') : params.have });
    case 'cuda':
      return t('gap_cuda', { ...params, have: g.have === null ? t('gap_no_gpu') : params.have });
    case 'min_vram':
      return t('gap_min_vram', { need: show(g.need, true), have: g.have === null ? t('gap_no_gpu') : show(g.have, true) });
    case 'rentable':
    case 'reserved':
    case 'app':
    case 'gpu_count':
    case 'cpu_cores':
    case 'memory_bytes':
    case 'disk_bytes':
      return t(`gap_${g.field}` as MessageKey, params);
    default:
      return `${g.field}: ${params.need} / ${params.have}`;
  }
}

export function GapList({ gaps }: { gaps: Gap[] }) {
  const t = useT();
  return (
    <ul className="gap-list">
      {gaps.map((g) => (
        <li key={g.field} data-field={g.field}>
          {gapText(t, g)}
        </li>
      ))}
    </ul>
  );
}

/**
 * What a demand asks: app, GPUs, models, the lowest CUDA and the VRAM per GPU when set, distance,
 * hours × price, and the distance from the viewer.
 */
export function DemandTerms({ order }: { order: Order }) {
  const t = useT();
  const o = order;
  const parts = [
    o.app_name,
    o.gpu_count > 0 ? t('demand_gpus', { count: o.gpu_count }) : t('demand_any_gpu'),
    o.gpu_models ? t('demand_models', { models: o.gpu_models }) : null,
    o.min_cuda ? t('demand_min_cuda', { cuda: o.min_cuda }) : null,
    o.min_vram ? t('demand_min_vram', { size: formatSize(o.min_vram) }) : null,
    o.distance_km !== null ? t('demand_within', { km: o.distance_km }) : t('demand_anywhere'),
    t('demand_terms', { hours: o.hours, price: formatCoins(o.price_per_hour) }),
    o.distance_from_you_km !== null ? t('demand_from_you', { km: o.distance_from_you_km }) : null,
  ].filter(Boolean);
  return <div className="muted small-text demand-terms">{parts.join(' · ')}</div>;
}

export function OrderDeadline({ order }: { order: Order }) {
  const t = useT();
  return order.deadline_at ? <span className="muted small-text">{t('demand_deadline', { time: formatDateTime(order.deadline_at) })}</span> : null;
}
