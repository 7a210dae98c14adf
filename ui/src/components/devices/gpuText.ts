// The console's GPU words (issue 38), both languages, loaded with the pages that show them (the
// device page, the installation page, AI compute: not in the first-load bundle; the words the
// public and market pages need are in i18n/gpus.*.ts), and GPUs in words: GB figures,
// percentages, a failed verification's reason, the "Your GPU" sentence. Deterministic
// (lib/format): the same text on the server and in the browser.
import { useCallback } from 'react';
import { GPU_CHECK_REASONS, type GpuCheck, type GpuDetails, type GpuPoint, type GpuUse, type Verification } from '../../api/gpus';
import { SIZE_STEP } from '../../constants';
import { translate, type Lang, type MessageKey } from '../../i18n';
import { formatNumber, toEpochMs } from '../../lib/format';
import { useLang } from '../../lib/i18n';

export const gpuEn = {
  gpu_title: 'GPU {index}',
  gpu_uuid: 'UUID',
  gpu_verified_text: 'Verified {date}: {d2d} GB/s on the card, {h2d} GB/s from the host',
  gpu_failed_text: 'Failed verification {date}: {reason}',
  gpu_never_text: 'Not verified yet: Verify GPUs measures it.',
  gpu_not_offered: 'A GPU of this box failed its verification: the box is not offered for GPU apps until it passes.',
  gpu_reason_slow_memory: 'its memory copies far slower than this model should',
  gpu_reason_slow_host_link: 'copies from the host are far slower than they should be (a narrow or slow PCIe link)',
  gpu_reason_ecc_errors: 'its memory reports uncorrected ECC errors',
  gpu_reason_throttled: 'it is held back by a hardware or thermal slowdown',
  gpu_reason_cuda_unavailable: 'the CUDA driver could not be loaded or the GPU could not be opened',
  gpu_reason_copy_failed: 'a test copy failed or gave wrong data',
  gpu_reason_not_found: 'the box could not find this GPU',
  gpu_reason_other: 'it did not pass ({reason})',
  gpu_verify: 'Verify GPUs',
  gpu_verify_hint: 'Measures the copy speed of each GPU on the box (a few seconds) and reads its health.',
  gpu_measuring: 'Measuring…',
  gpu_verify_done: 'GPU verification finished',
  gpu_verify_waiting: 'No result yet: the box has not answered. Look again in a minute.',
  gpu_utilization: 'Utilization',
  gpu_memory_used: 'Memory used',
  gpu_temperature: 'Temperature',
  gpu_power: 'Power',
  gpu_used_of: '{used} of {total} GB',
  chart_label: '{what}, last {minutes} minutes: now {latest}',
  chart_label_empty: '{what}: no figures yet',
  chart_no_data: 'No figures yet',
  gpu_your: 'Your GPU',
  gpu_your_hint: 'The GPU this app holds, by its UUID: no one else’s app runs on it.',
  gpu_your_text: 'Your GPU: {util} % busy, {used} of {total} GB',
  gpu_your_none: 'Your GPU: no figures yet',
  gpu_use_short: '{util} % · {used} / {total} GB',
};

export const gpuZh: Record<keyof typeof gpuEn, string> = {
  gpu_title: 'GPU {index}',
  gpu_uuid: 'UUID',
  gpu_verified_text: '{date} 验证通过：GPU 内复制 {d2d} GB/s，主机到 GPU {h2d} GB/s',
  gpu_failed_text: '{date} 验证未通过：{reason}',
  gpu_never_text: '尚未验证：点击“验证 GPU”进行测量。',
  gpu_not_offered: '这台设备有 GPU 未通过验证：通过之前，它不会被用于 GPU 应用。',
  gpu_reason_slow_memory: '显存复制速度远低于该型号应有的水平',
  gpu_reason_slow_host_link: '主机到 GPU 的复制远慢于应有速度（PCIe 链路过窄或过慢）',
  gpu_reason_ecc_errors: '显存报告了无法纠正的 ECC 错误',
  gpu_reason_throttled: '受到硬件或过热降频的限制',
  gpu_reason_cuda_unavailable: '无法加载 CUDA 驱动或无法打开这块 GPU',
  gpu_reason_copy_failed: '测试复制失败或返回了错误的数据',
  gpu_reason_not_found: '设备上找不到这块 GPU',
  gpu_reason_other: '未通过（{reason}）',
  gpu_verify: '验证 GPU',
  gpu_verify_hint: '在设备上测量每块 GPU 的复制速度（几秒钟），并读取其健康状态。',
  gpu_measuring: '正在测量…',
  gpu_verify_done: 'GPU 验证已完成',
  gpu_verify_waiting: '还没有结果：设备尚未回应，请一分钟后再看。',
  gpu_utilization: '利用率',
  gpu_memory_used: '已用显存',
  gpu_temperature: '温度',
  gpu_power: '功率',
  gpu_used_of: '已用 {used} / {total} GB',
  chart_label: '{what}，最近 {minutes} 分钟：当前 {latest}',
  chart_label_empty: '{what}：暂无数据',
  chart_no_data: '暂无数据',
  gpu_your: '你的 GPU',
  gpu_your_hint: '这个应用按 UUID 独占的 GPU：其他人的应用不会在上面运行。',
  gpu_your_text: '你的 GPU：{util}% 忙碌，已用 {used} / {total} GB',
  gpu_your_none: '你的 GPU：暂无数据',
  gpu_use_short: '{util}% · {used} / {total} GB',
};

export type GpuKey = keyof typeof gpuEn;
/** `t` of the GPU words: its own, else the app's. */
export type GpuT = (key: GpuKey | MessageKey, params?: Record<string, string | number>) => string;

/** A GPU word (or an app word) in `lang`, `{name}` placeholders filled. */
export function gpuTranslate(lang: Lang, key: GpuKey | MessageKey, params?: Record<string, string | number>): string {
  const own = (lang === 'zh' ? gpuZh : gpuEn) as Record<string, string>;
  if (!(key in own)) return translate(lang, key, params);
  let text = own[key];
  for (const name of Object.keys(params ?? {})) text = text.split(`{${name}}`).join(String(params![name]));
  return text;
}

export function useGpuT(): GpuT {
  const lang = useLang();
  return useCallback((key, params) => gpuTranslate(lang, key, params), [lang]);
}

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

const known = (v: number | null | undefined): v is number => v !== null && v !== undefined && Number.isFinite(v);
/** "61 °C", "540 W"; "-" when the box does not say. */
export const celsius = (v: number | null | undefined) => (known(v) ? `${formatNumber(v, 0)} °C` : '-');
export const watts = (v: number | null | undefined) => (known(v) ? `${formatNumber(v, 0)} W` : '-');
/** GB/s with one decimal ("52.3"); "-" when not measured. */
export const gbps = (v: number | null | undefined) => (known(v) ? formatNumber(v, 1) : '-');

/** Why a GPU failed its verification, in words (an unknown name: said as sent). */
export function checkReasonText(t: GpuT, reason: string | null | undefined): string {
  if (reason && (GPU_CHECK_REASONS as readonly string[]).includes(reason)) return t(`gpu_reason_${reason}` as GpuKey);
  return t('gpu_reason_other', { reason: reason || '-' });
}

/** What the last verification found of the GPU `uuid` (none: never verified, or not in it). */
export function checkOf(verification: Verification | null | undefined, uuid: string | null | undefined): GpuCheck | null {
  if (!verification || !uuid) return null;
  return verification.gpus.find((g) => g.uuid.toLowerCase() === uuid.toLowerCase()) ?? null;
}

/** Whether a GPU failed the box's last verification. */
export const anyFailed = (verification: Verification | null | undefined) => !!verification?.gpus.some((g) => !g.ok);

/** "GPU 0", or the place in the list (from 0) of an agent that sends no index. */
export const gpuTitle = (t: GpuT, g: GpuDetails, position: number) => t('gpu_title', { index: g.index ?? position });

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
export function yourGpuText(t: GpuT, use: Pick<GpuUse, 'utilization' | 'memory_used'> | null, vram: number): string {
  if (!use) return t('gpu_your_none');
  return t('gpu_your_text', { util: percentFigure(use.utilization), used: gbFigure(use.memory_used), total: gbFigure(vram) });
}

/** "97 % · 36 / 140 GB" (AI compute's GPUs). */
export function gpuUseText(t: GpuT, use: Pick<GpuUse, 'utilization' | 'memory_used'>, vram: number): string {
  return t('gpu_use_short', { util: percentFigure(use.utilization), used: gbFigure(use.memory_used), total: gbFigure(vram) });
}

/** The accessible name of a chart: what it shows over the window, and its latest figure. */
export function chartLabel(t: GpuT, what: string, latest: string | null, minutes: number): string {
  return latest === null ? t('chart_label_empty', { what }) : t('chart_label', { what, minutes, latest });
}
