// GPUs in words (issue 38), for every page that shows them: GB figures, percentages, a failed
// verification's reason, the "Your GPU" sentence, an offer's GPU marks. Deterministic (lib/format):
// the same text on the server and in the browser.
import type { GpuCheck, GpuDetails, GpuPoint, GpuUse, OfferFit, Verification } from '../../api/gpus';
import { GPU_CHECK_REASONS } from '../../api/gpus';
import { SIZE_STEP } from '../../constants';
import type { MessageKey } from '../../i18n';
import { formatNumber, toEpochMs } from '../../lib/format';
import type { TFunction } from '../../lib/i18n';

/** The window of the live charts (minutes) and how often they are fetched again. */
export const GPU_METRICS_MINUTES = 60;
export const GPU_METRICS_REFRESH_MS = 10_000;

const GIB = SIZE_STEP * SIZE_STEP * SIZE_STEP;

/**
 * Bytes as a GB figure without the unit, in the product's steps of 1024 (docs/product.md §9):
 * whole gigabytes from 10 GB up ("36", "140"), one decimal below ("7.5", "0.3"), "0" for nothing.
 */
export function gbFigure(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes <= 0) return '0';
  const gb = bytes / GIB;
  if (gb >= 10) return formatNumber(gb, 0);
  return formatNumber(gb, 1).replace(/\.0$/, '');
}

/** A percentage as a whole number ("97"); "-" when unknown. */
export function percentFigure(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '-';
  return formatNumber(Math.min(100, Math.max(0, v)), 0);
}

/** "61 °C", "540 W"; "-" when the box does not say. */
export const celsius = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '-' : `${formatNumber(v, 0)} °C`);
export const watts = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '-' : `${formatNumber(v, 0)} W`);

/** Why a GPU failed its verification, in words (an unknown name: said as sent). */
export function checkReasonText(t: TFunction, reason: string | null | undefined): string {
  if (reason && (GPU_CHECK_REASONS as readonly string[]).includes(reason)) return t(`gpu_reason_${reason}` as MessageKey);
  return t('gpu_reason_other', { reason: reason || '-' });
}

/** GB/s with one decimal ("52.3"); "-" when not measured. */
export const gbps = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '-' : formatNumber(v, 1));

/** What the last verification found of the GPU `uuid` (none: never verified, or not in it). */
export function checkOf(verification: Verification | null | undefined, uuid: string | null | undefined): GpuCheck | null {
  if (!verification || !uuid) return null;
  return verification.gpus.find((g) => g.uuid.toLowerCase() === uuid.toLowerCase()) ?? null;
}

/** Whether a GPU failed the box's last verification. */
export const anyFailed = (verification: Verification | null | undefined) => !!verification?.gpus.some((g) => !g.ok);

/** "GPU 0", or the place in the list (from 0) of an agent that sends no index. */
export const gpuTitle = (t: TFunction, g: GpuDetails, position: number) => t('gpu_title', { index: g.index ?? position });

/** "On" / "Off" / "-" (an older agent does not say). */
export function migText(t: TFunction, mig: boolean | null | undefined): string {
  if (mig === null || mig === undefined) return '-';
  return mig ? t('gpu_mig_on') : t('gpu_mig_off');
}

/** The latest figures of a GPU: the last point of its series, else the device's latest beat. */
export function latestUse(series: GpuPoint[] | undefined, beat?: GpuUse | null): Omit<GpuUse, 'uuid'> | null {
  let last: GpuPoint | null = null;
  let lastAt = -Infinity;
  for (const p of series ?? []) {
    const at = toEpochMs(p.at) ?? -Infinity;
    if (!last || at >= lastAt) {
      last = p;
      lastAt = at;
    }
  }
  if (last) return last;
  return beat ?? null;
}

/** "Your GPU: 97 % busy, 36 of 140 GB" (no figures yet: said so). */
export function yourGpuText(t: TFunction, use: Pick<GpuUse, 'utilization' | 'memory_used'> | null, vram: number): string {
  if (!use) return t('gpu_your_none');
  return t('gpu_your_text', { util: percentFigure(use.utilization), used: gbFigure(use.memory_used), total: gbFigure(vram) });
}

/** "97 % · 36 / 140 GB" (AI compute's GPUs). */
export function gpuUseText(t: TFunction, use: Pick<GpuUse, 'utilization' | 'memory_used'>, vram: number): string {
  return t('gpu_use_short', { util: percentFigure(use.utilization), used: gbFigure(use.memory_used), total: gbFigure(vram) });
}

/** What an offer says of its box's GPUs: free of all, CUDA, verified or not. Empty for a box without GPUs. */
export function offerGpuMarks(t: TFunction, f: Pick<OfferFit, 'gpus' | 'gpus_free' | 'cuda' | 'verified'>): string[] {
  if (!f.gpus.length) return [];
  const marks: string[] = [];
  if (typeof f.gpus_free === 'number') marks.push(t('offer_gpus_free', { free: f.gpus_free, total: f.gpus.length }));
  if (f.cuda) marks.push(t('offer_cuda', { cuda: f.cuda }));
  if (f.verified === true) marks.push(t('gpu_verified'));
  else if (f.verified === false) marks.push(t('gpu_failed'));
  else if (f.verified === null) marks.push(t('offer_unverified'));
  return marks;
}
