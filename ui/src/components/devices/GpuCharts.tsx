// A GPU's live use as the device page (its owner) and the installation page (its renter) show it:
// the metrics call polled while the page is visible, a GPU's utilization and memory charts with
// its temperature and power, a UUID one can copy, the verified mark.
import { useEffect, useRef, useState } from 'react';
import { fetchDeviceMetrics, type DeviceMetrics, type GpuPoint, type GpuSeries, type GpuUse } from '../../api/gpus';
import { copyText } from '../../lib/clipboard';
import { useInterval } from '../../lib/timing';
import { useAsync, type AsyncState } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';
import { Icon } from '../Icon';
import { LineChart, latestValue, type ChartPoint } from '../LineChart';
import { GPU_METRICS_MINUTES, GPU_METRICS_REFRESH_MS, celsius, chartLabel, gbFigure, latestUse, percentFigure, useGpuT, watts } from './gpuText';

/**
 * The device's series of the last `minutes`, fetched after mount and again every 10 s while the page
 * is visible (a failed refresh keeps what is shown). `deviceId` null: nothing is fetched.
 */
export function useDeviceMetrics(deviceId: string | null, minutes = GPU_METRICS_MINUTES): AsyncState<DeviceMetrics> {
  const state = useAsync(deviceId ? (signal) => fetchDeviceMetrics(deviceId, minutes, signal) : null, [deviceId, minutes]);
  useInterval(state.refresh, GPU_METRICS_REFRESH_MS);
  return state;
}

/** The series of the GPU `uuid` in a metrics answer (none when the box has not reported it). */
export function seriesOf(metrics: DeviceMetrics | undefined, uuid: string | null | undefined): GpuPoint[] {
  if (!metrics || !uuid) return [];
  return metrics.gpus.find((g: GpuSeries) => g.uuid.toLowerCase() === uuid.toLowerCase())?.series ?? [];
}

const percent = (v: number) => `${percentFigure(v)} %`;

/** A box's CPU use (percent) over the window. */
export function PercentChart({ title, points, minutes = GPU_METRICS_MINUTES }: { title: string; points: ChartPoint[]; minutes?: number }) {
  const t = useGpuT();
  const last = latestValue(points);
  return (
    <LineChart
      title={title}
      label={chartLabel(t, title, last === null ? null : percent(last), minutes)}
      points={points}
      max={100}
      format={percent}
      empty={t('chart_no_data')}
      windowMs={minutes * 60_000}
    />
  );
}

/** Memory used (bytes) of `total` over the window; the caption says "36 of 140 GB". */
export function BytesChart({ title, points, total, minutes = GPU_METRICS_MINUTES }: { title: string; points: ChartPoint[]; total: number; minutes?: number }) {
  const t = useGpuT();
  const last = latestValue(points);
  const caption = last === null ? null : t('gpu_used_of', { used: gbFigure(last), total: gbFigure(total) });
  return (
    <LineChart
      title={title}
      label={chartLabel(t, title, caption, minutes)}
      points={points}
      max={total > 0 ? total : Math.max(1, ...points.map((p) => p.value ?? 0))}
      format={(v) => `${gbFigure(v)} GB`}
      latest={caption ?? undefined}
      empty={t('chart_no_data')}
      windowMs={minutes * 60_000}
    />
  );
}

/** One GPU's utilization and memory charts, then its latest temperature and power (from the series, else the latest beat). */
export function GpuUseCharts({ series, vram, beat, minutes = GPU_METRICS_MINUTES }: { series: GpuPoint[]; vram: number; beat?: GpuUse | null; minutes?: number }) {
  const t = useGpuT();
  const latest = latestUse(series, beat);
  return (
    <div className="gpu-use">
      <div className="gpu-charts">
        <PercentChart title={t('gpu_utilization')} points={series.map((p) => ({ at: p.at, value: p.utilization }))} minutes={minutes} />
        <BytesChart title={t('gpu_memory_used')} points={series.map((p) => ({ at: p.at, value: p.memory_used }))} total={vram} minutes={minutes} />
      </div>
      {latest ? (
        <p className="gpu-now muted">
          <span data-testid="gpu-temperature">
            {t('gpu_temperature')} {celsius(latest.temperature)}
          </span>
          {' · '}
          <span data-testid="gpu-power">
            {t('gpu_power')} {watts(latest.power_watts)}
          </span>
        </p>
      ) : null}
    </div>
  );
}

/** A GPU's UUID in monospace, cut short with an ellipsis where the space ends, with a Copy button. */
export function UuidCopy({ uuid }: { uuid: string }) {
  const t = useGpuT();
  const [copied, setCopied] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const copy = async () => {
    if (await copyText(uuid)) {
      setCopied(true);
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(() => setCopied(false), 1500);
    } else toast('error', t('copy_failed'));
  };
  return (
    <span className="uuid-copy">
      <code className="mono" title={uuid} data-testid="gpu-uuid">
        {uuid}
      </code>
      <button type="button" className="icon-button small" onClick={() => void copy()} aria-label={`${t('copy')}: ${uuid}`} title={copied ? t('copied') : t('copy')}>
        <Icon name={copied ? 'check' : 'copy'} size={14} />
      </button>
    </span>
  );
}

/** Verified / failed / not verified yet, as a small chip. */
export function VerifiedMark({ state }: { state: 'ok' | 'failed' | 'never' }) {
  const t = useGpuT();
  const text = state === 'ok' ? t('gpu_verified') : state === 'failed' ? t('gpu_failed') : t('gpu_unverified');
  return (
    <span className={`gpu-mark gpu-mark-${state}`} data-verified={state}>
      {text}
    </span>
  );
}
