// @vitest-environment happy-dom
// GPUs as they are (issue 38): the line chart (its runs, its accessible name, the same markup on
// the server), the GB figures, the "Your GPU" sentence in both languages, a failed verification's
// reason and the offers' marks and fit reasons in words.
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { GpuPoint, OfferFit } from '../src/api/gpus';
import { LineChart, chartRuns, latestValue } from '../src/components/LineChart';
import { GpuUseCharts } from '../src/components/devices/GpuCharts';
import { checkReasonText, gbFigure, gpuEn, gpuTranslate, gpuUseText, gpuZh, latestUse, percentFigure, yourGpuText, type GpuKey } from '../src/components/devices/gpuText';
import { offerGpuMarks } from '../src/components/devices/gpuMarks';
import { gpuText, groupNames } from '../src/components/devices/deviceStatus';
import { fitText } from '../src/components/apps/devicePicker';
import { gapText } from '../src/pages/ondemand/orders';
import type { MessageKey } from '../src/i18n';
import { LangContext } from '../src/lib/i18n';
import { show, unmount } from './connect-render';

const en = (key: GpuKey | MessageKey, params?: Record<string, string | number>) => gpuTranslate('en', key, params);
const zh = (key: GpuKey | MessageKey, params?: Record<string, string | number>) => gpuTranslate('zh', key, params);

const H200 = 150_754_820_096; // what NVML reports of an H200: 140.4 GiB
const at = (min: number) => new Date(Date.UTC(2026, 10, 28, 8, min)).toISOString();
const points = (values: (number | null)[]) => values.map((value, i) => ({ at: at(i), value }));

afterEach(async () => {
  await unmount();
});

describe('the GPU words', () => {
  it('have both languages, none empty, the same placeholders', () => {
    const ph = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort().join(',');
    expect(Object.keys(gpuZh).sort()).toEqual(Object.keys(gpuEn).sort());
    for (const k of Object.keys(gpuEn) as GpuKey[]) {
      expect(gpuEn[k].trim(), k).not.toBe('');
      expect(gpuZh[k].trim(), k).not.toBe('');
      expect(ph(gpuZh[k]), k).toBe(ph(gpuEn[k]));
    }
  });
  it('fall back to the app words', () => {
    expect(en('gpu_measuring')).toBe('Measuring…');
    expect(zh('gpu_verify')).toBe('验证 GPU');
    expect(zh('no_gpu')).toBe('无 GPU');
  });
});

describe('GB figures and percentages', () => {
  it('prints gigabytes in steps of 1024: whole from 10 GB, one decimal below', () => {
    expect(gbFigure(H200)).toBe('140');
    expect(gbFigure(39e9)).toBe('36');
    expect(gbFigure(8 * 2 ** 30)).toBe('8');
    expect(gbFigure(7.5 * 2 ** 30)).toBe('7.5');
    expect(gbFigure(0.3 * 2 ** 30)).toBe('0.3');
    expect(gbFigure(0)).toBe('0');
    expect(gbFigure(null)).toBe('0');
    expect(gbFigure(Number.NaN)).toBe('0');
  });
  it('prints a percentage whole and within 0-100', () => {
    expect(percentFigure(97)).toBe('97');
    expect(percentFigure(96.6)).toBe('97');
    expect(percentFigure(120)).toBe('100');
    expect(percentFigure(null)).toBe('-');
  });
});

describe('Your GPU', () => {
  const use = { utilization: 97, memory_used: 39e9 };
  it('says how busy and how full, in both languages', () => {
    expect(yourGpuText(en, use, H200)).toBe('Your GPU: 97 % busy, 36 of 140 GB');
    expect(yourGpuText(zh, use, H200)).toBe('你的 GPU：97% 忙碌，已用 36 / 140 GB');
    expect(gpuUseText(en, use, H200)).toBe('97 % · 36 / 140 GB');
  });
  it('says when there are no figures yet', () => {
    expect(yourGpuText(en, null, H200)).toBe('Your GPU: no figures yet');
    expect(yourGpuText(zh, null, H200)).toBe('你的 GPU：暂无数据');
  });
  it('takes the latest point of the series, else the latest beat', () => {
    const series: GpuPoint[] = [
      { at: at(2), utilization: 50, memory_used: 1, temperature: null, power_watts: null },
      { at: at(5), utilization: 97, memory_used: 2, temperature: 61, power_watts: 540 },
      { at: at(3), utilization: 10, memory_used: 3, temperature: null, power_watts: null },
    ];
    expect(latestUse(series)?.utilization).toBe(97);
    expect(latestUse([], { uuid: 'GPU-1', utilization: 5, memory_used: 0, temperature: null, power_watts: null })?.utilization).toBe(5);
    expect(latestUse(undefined)).toBeNull();
  });
});

describe('verification and offers in words', () => {
  it('words every reason a verification fails with, and an unknown one as sent', () => {
    expect(checkReasonText(en, 'slow_memory')).toBe('its memory copies far slower than this model should');
    expect(checkReasonText(zh, 'ecc_errors')).toBe('显存报告了无法纠正的 ECC 错误');
    for (const r of ['slow_memory', 'slow_host_link', 'ecc_errors', 'throttled', 'cuda_unavailable', 'copy_failed', 'not_found']) {
      expect(checkReasonText(en, r)).not.toContain('_');
      expect(checkReasonText(zh, r)).not.toContain('_');
    }
    expect(checkReasonText(en, 'melted')).toBe('it did not pass (melted)');
  });

  const offer = (over: Partial<OfferFit>): OfferFit => ({
    device_id: 'D1',
    device_name: 'Box',
    device_status: 'online',
    fits: false,
    free: { cpu_cores: 8, memory_bytes: 0, disk_bytes: 0, gpu_count: 0 },
    gaps: [],
    gpus: ['NVIDIA H200', 'NVIDIA H200'],
    price_per_hour: null,
    reason: null,
    gpus_free: 2,
    verified: null,
    cuda: null,
    spec: { cpu_cores: 8, memory_bytes: 0, disk_bytes: 0, gpus: [] },
    reliability: { uptime_7d: null, uptime_30d: null },
    distance_km: null,
    location: null,
    ...over,
  });

  it('words the two new reasons in both languages', () => {
    expect(fitText(en, offer({ reason: 'no_free_gpu' }))).toBe('All its GPUs are taken');
    expect(fitText(zh, offer({ reason: 'no_free_gpu' }))).toBe('它的 GPU 已全部被占用');
    const old = offer({ reason: 'cuda_too_old', gaps: [{ field: 'cuda', need: '12.4', have: '12.2' }] });
    expect(fitText(en, old)).toBe('CUDA: needs 12.4, the box runs 12.2');
    expect(fitText(zh, old)).toBe('CUDA：需要 12.4，设备为 12.2');
    expect(fitText(en, offer({ reason: 'cuda_too_old' }))).toBe('Its CUDA is too old for this app');
    expect(fitText(en, offer({ reason: 'something_new' }))).toBe('Cannot take this app now (something_new)');
    expect(gapText(en, { field: 'cuda', need: '12.4', have: '11.8' })).toBe('CUDA: needs 12.4, the box runs 11.8');
  });

  it('marks an offer with its free GPUs, CUDA and verification', () => {
    expect(offerGpuMarks(en, offer({ gpus_free: 1, cuda: '13.0', verified: true }))).toEqual(['1 of 2 GPUs free', 'CUDA 13.0', 'Verified']);
    expect(offerGpuMarks(zh, offer({ gpus_free: 0, cuda: '12.2', verified: false }))).toEqual(['2 块 GPU 中 0 块空闲', 'CUDA 12.2', '验证未通过']);
    expect(offerGpuMarks(en, offer({ verified: null }))).toEqual(['2 of 2 GPUs free', 'Not verified yet']);
    // A box without GPUs: no marks.
    expect(offerGpuMarks(en, offer({ gpus: [], gpus_free: 0, verified: true }))).toEqual([]);
  });
});

describe('the line chart', () => {
  it('places points in the window and breaks where nothing was measured', () => {
    const runs = chartRuns(points([0, 50, 100, null, 100]), 100, null, 5 * 60_000);
    expect(runs.length).toBe(2);
    expect(runs[0].length).toBe(3);
    // x grows with time, y falls as the value rises, integers only.
    expect(runs[0][0][0]).toBeLessThan(runs[0][2][0]);
    expect(runs[0][0][1]).toBeGreaterThan(runs[0][2][1]);
    for (const run of runs) for (const [x, y] of run) expect(Number.isInteger(x) && Number.isInteger(y)).toBe(true);
    // A silence longer than the gap splits the line; values above the top stay on the chart.
    const gapped = [{ at: at(0), value: 10 }, { at: at(1), value: 500 }, { at: at(30), value: 10 }];
    const split = chartRuns(gapped, 100, null, 5 * 60_000);
    expect(split.length).toBe(2);
    expect(split[0][1][1]).toBe(10);
    expect(chartRuns([], 100, null, 1)).toEqual([]);
    expect(latestValue(points([1, 2, null]))).toBe(2);
    expect(latestValue([])).toBeNull();
  });

  it('names itself with its latest value, and says when it has none', async () => {
    const el = await show(<LineChart title="Utilization" label="Utilization: now 97 %" points={points([80, 97])} max={100} format={(v) => `${v} %`} empty="No figures yet" />);
    const svg = el.querySelector('svg')!;
    expect(svg.getAttribute('role')).toBe('img');
    expect(svg.getAttribute('aria-label')).toBe('Utilization: now 97 %');
    expect(el.querySelector('.line-chart-latest')!.textContent).toBe('97 %');
    expect(el.querySelector('polyline')).not.toBeNull();
    await unmount();
    const empty = await show(<LineChart title="Utilization" label="Utilization: no figures yet" points={[]} max={100} format={(v) => `${v} %`} empty="No figures yet" />);
    expect(empty.querySelector('polyline')).toBeNull();
    expect(empty.querySelector('.line-chart-latest')).toBeNull();
    expect(empty.textContent).toContain('No figures yet');
  });

  it('renders on the server (no window) the markup the browser renders', async () => {
    const series: GpuPoint[] = [0, 1, 2, 3, 4].map((m) => ({ at: at(m), utilization: 97, memory_used: 39e9, temperature: m === 4 ? 61 : null, power_watts: m === 4 ? 540 : null }));
    const node = (
      <LangContext.Provider value="zh">
        <GpuUseCharts series={series} vram={H200} />
      </LangContext.Provider>
    );
    const html = renderToString(node);
    expect(html).toContain('aria-label="利用率，最近 60 分钟：当前 97 %"');
    expect(html).toContain('已用 36 / 140 GB');
    expect(html).toContain('61 °C');
    expect(html).toContain('540 W');
    const el = await show(<GpuUseCharts series={series} vram={H200} />, 'zh');
    expect(el.querySelector('svg')!.outerHTML).toBe(new DOMParser().parseFromString(html, 'text/html').querySelector('svg')!.outerHTML);
  });

  it('renders a GPU with no series and null figures cleanly', async () => {
    const el = await show(<GpuUseCharts series={[]} vram={0} />);
    expect(el.querySelectorAll('svg').length).toBe(2);
    expect(el.textContent).toContain('No figures yet');
    expect(el.querySelector('[data-testid="gpu-temperature"]')).toBeNull();
  });
});

describe('GPU names', () => {
  it('name a repeated GPU once with its count, in their first order', () => {
    expect(groupNames(['NVIDIA H200', 'NVIDIA H200', 'RTX 4090', 'NVIDIA H200'])).toBe('NVIDIA H200 ×3, RTX 4090');
    expect(groupNames(['A100'])).toBe('A100');
    expect(gpuText(en, [{ name: 'NVIDIA H200', passthrough: true, vram: H200 }, { name: 'NVIDIA H200', passthrough: true, vram: H200 }])).toBe('NVIDIA H200 (140.40 GB) ×2');
    expect(gpuText(zh, [])).toBe('无 GPU');
  });
});
