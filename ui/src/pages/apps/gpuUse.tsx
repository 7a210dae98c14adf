// The GPUs an installation holds, live (issue 38): the installation page's "Your GPU" block (a
// sentence and the utilization and memory charts of each held GPU) and AI compute's GPU column
// (the latest figures of each). The metrics call of the installation's box answers a renter only
// the GPUs their installation holds; an owner gets all, and the held ones are picked here by UUID.
import { fetchDeviceMetrics, type DeviceMetrics, type HeldGpu } from '../../api/gpus';
import { GpuUseCharts, seriesOf, useDeviceMetrics } from '../../components/devices/GpuCharts';
import { GPU_METRICS_REFRESH_MS, gbFigure, gpuUseText, latestUse, percentFigure, useGpuT, yourGpuText } from '../../components/devices/gpuText';
import { Section } from '../../components/sections';
import { formatSize } from '../../lib/format';
import { useInterval } from '../../lib/timing';
import { useAsync } from '../../lib/useAsync';

/** "Your GPU": each GPU the installation holds with its live use. Nothing when it holds none. */
export function YourGpu({ deviceId, gpus }: { deviceId: string; gpus: HeldGpu[] | null | undefined }) {
  const t = useGpuT();
  const held = gpus ?? [];
  const metrics = useDeviceMetrics(held.length ? deviceId : null);
  if (!held.length) return null;
  return (
    <Section id="your-gpu" title={t('gpu_your')} className="your-gpu">
      <p className="muted small">{t('gpu_your_hint')}</p>
      {held.map((g, i) => {
        const series = seriesOf(metrics.data, g.uuid);
        return (
          <div key={g.uuid ?? i} className="your-gpu-item" data-gpu={g.uuid ?? i}>
            <p className="your-gpu-text" data-testid="your-gpu-text">
              {yourGpuText(t, latestUse(series), g.vram)}
            </p>
            <p className="muted small">
              {g.name} · {formatSize(g.vram)}
              {g.uuid ? <span className="mono"> · {g.uuid}</span> : null}
            </p>
            <GpuUseCharts series={series} vram={g.vram} />
          </div>
        );
      })}
    </Section>
  );
}

/** The latest metrics of each of `deviceIds` (minutes=5), every 10 s while the page is visible; a box that answers nothing is left out. */
export function useLatestMetrics(deviceIds: string[]) {
  const key = [...new Set(deviceIds)].sort().join(',');
  const state = useAsync(
    key
      ? async (signal) => {
          const ids = key.split(',');
          const answers = await Promise.all(ids.map((id) => fetchDeviceMetrics(id, 5, signal).catch(() => null)));
          const byDevice: Record<string, DeviceMetrics> = {};
          ids.forEach((id, i) => {
            const m = answers[i];
            if (m) byDevice[id] = m;
          });
          return byDevice;
        }
      : null,
    [key],
  );
  useInterval(state.refresh, GPU_METRICS_REFRESH_MS);
  return state.data;
}

/** AI compute's GPU column: each held GPU with its latest utilization and memory. */
export function GpuLiveList({ gpus, metrics }: { gpus: HeldGpu[]; metrics: DeviceMetrics | undefined }) {
  const t = useGpuT();
  if (!gpus.length) return <>{t('no_gpu')}</>;
  return (
    <ul className="gpu-live-list">
      {gpus.map((g, i) => {
        const use = latestUse(seriesOf(metrics, g.uuid));
        return (
          <li key={g.uuid ?? i} data-gpu={g.uuid ?? i}>
            <span>
              {g.name} ({gbFigure(g.vram)} GB)
            </span>
            {use ? (
              <>
                <span className="muted small" data-testid="gpu-live">
                  {' · '}
                  {gpuUseText(t, use, g.vram)}
                </span>
                <div className="meter" role="img" aria-label={`${t('gpu_utilization')} ${percentFigure(use.utilization)} %`}>
                  <span style={{ width: `${percentFigure(use.utilization) === '-' ? 0 : Math.min(100, Math.max(0, use.utilization))}%` }} />
                </div>
              </>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
