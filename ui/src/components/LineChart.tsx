// A value over time as a hand-drawn SVG line (no chart library, like DailyChart): a GPU's
// utilization or memory, a box's CPU or memory. Time runs left to right over the window that ends
// at the latest point; the value axis runs from 0 to `max`. Integer coordinates only and no
// window, document or Intl, so the markup is the same wherever it renders. A missing value (null)
// or a silence longer than `gapMs` breaks the line: nothing is drawn where nothing was measured.
import { formatDateTime, toEpochMs } from '../lib/format';

const WIDTH = 480;
const HEIGHT = 140;
const PAD_LEFT = 56;
const PAD_RIGHT = 8;
const PAD_TOP = 10;
const PAD_BOTTOM = 22;
const PLOT_W = WIDTH - PAD_LEFT - PAD_RIGHT;
const PLOT_H = HEIGHT - PAD_TOP - PAD_BOTTOM;

export interface ChartPoint {
  /** RFC 3339 (or epoch ms). */
  at: string | number;
  value: number | null;
}

/** A drawn run of points: [x, y] in the chart's coordinates. */
type Run = [number, number][];

/**
 * The runs of the line: points sorted by time, placed in the plot, split where a value is missing
 * or two points are more than `gapMs` apart. Exported for the tests.
 */
export function chartRuns(points: ChartPoint[], max: number, windowMs: number | null, gapMs: number): Run[] {
  const timed = points
    .map((p) => ({ t: toEpochMs(p.at), v: p.value }))
    .filter((p): p is { t: number; v: number | null } => p.t !== null)
    .sort((a, b) => a.t - b.t);
  if (!timed.length) return [];
  const end = timed[timed.length - 1].t;
  const start = windowMs ? end - windowMs : timed[0].t;
  const span = Math.max(1, end - start);
  const top = max > 0 ? max : 1;
  const x = (t: number) => PAD_LEFT + Math.round(((t - start) / span) * PLOT_W);
  const y = (v: number) => PAD_TOP + PLOT_H - Math.round((Math.min(top, Math.max(0, v)) / top) * PLOT_H);
  const runs: Run[] = [];
  let run: Run = [];
  let last: number | null = null;
  for (const p of timed) {
    if (p.t < start) continue;
    if (p.v === null || !Number.isFinite(p.v) || (last !== null && p.t - last > gapMs)) {
      if (run.length) runs.push(run);
      run = [];
    }
    if (p.v !== null && Number.isFinite(p.v)) run.push([x(p.t), y(p.v)]);
    last = p.t;
  }
  if (run.length) runs.push(run);
  return runs;
}

/** The last point that has a value, or null. */
export function latestValue(points: ChartPoint[]): number | null {
  let best: { t: number; v: number } | null = null;
  for (const p of points) {
    const t = toEpochMs(p.at);
    if (t === null || p.value === null || !Number.isFinite(p.value)) continue;
    if (!best || t >= best.t) best = { t, v: p.value };
  }
  return best ? best.v : null;
}

const hhmm = (ms: number) => formatDateTime(ms).slice(11);

export function LineChart({
  title,
  label,
  points,
  max,
  format,
  latest,
  empty,
  windowMs = null,
  gapMs = 5 * 60_000,
  className = '',
}: {
  /** Shown above the chart. */
  title: string;
  /** The accessible name: what it shows and its latest value in words. */
  label: string;
  points: ChartPoint[];
  /** The top of the value axis (100 for a percentage, the GPU's memory for memory). */
  max: number;
  /** A value as the axis and the caption print it ("97 %", "36 GB"). */
  format: (v: number) => string;
  /** The caption's figure; by default the latest value, formatted. */
  latest?: string;
  /** Said in place of the line when there is no point yet. */
  empty: string;
  /** The span of the time axis, ending at the latest point; by default from the first point. */
  windowMs?: number | null;
  gapMs?: number;
  className?: string;
}) {
  const runs = chartRuns(points, max, windowMs, gapMs);
  const last = latestValue(points);
  const caption = latest ?? (last === null ? null : format(last));
  const times = points.map((p) => toEpochMs(p.at)).filter((t): t is number => t !== null);
  const end = times.length ? Math.max(...times) : null;
  const start = end === null ? null : windowMs ? end - windowMs : Math.min(...times);
  const baseline = PAD_TOP + PLOT_H;
  return (
    <figure className={`line-chart ${className}`.trim()}>
      <figcaption>
        <span className="line-chart-title">{title}</span>
        {caption !== null ? <span className="line-chart-latest">{caption}</span> : null}
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label} preserveAspectRatio="xMidYMid meet">
        {[0, max / 2, max].map((v, i) => {
          const gy = PAD_TOP + PLOT_H - Math.round((i / 2) * PLOT_H);
          return (
            <g key={i}>
              <line className="grid" x1={PAD_LEFT} x2={WIDTH - PAD_RIGHT} y1={gy} y2={gy} />
              <text className="axis" x={PAD_LEFT - 6} y={gy + 4} textAnchor="end">
                {format(v)}
              </text>
            </g>
          );
        })}
        {start !== null && end !== null ? (
          <>
            <text className="axis" x={PAD_LEFT} y={HEIGHT - 6} textAnchor="start">
              {hhmm(start)}
            </text>
            <text className="axis" x={WIDTH - PAD_RIGHT} y={HEIGHT - 6} textAnchor="end">
              {hhmm(end)}
            </text>
          </>
        ) : null}
        {runs.map((run, i) => {
          const line = run.map(([px, py]) => `${px},${py}`).join(' ');
          const area = `${run[0][0]},${baseline} ${line} ${run[run.length - 1][0]},${baseline}`;
          return (
            <g key={i}>
              <polygon className="area" points={area} />
              {run.length > 1 ? <polyline className="line" points={line} /> : <circle className="dot" cx={run[0][0]} cy={run[0][1]} r={3} />}
            </g>
          );
        })}
        {!runs.length ? (
          <text className="axis line-chart-empty" x={PAD_LEFT + Math.round(PLOT_W / 2)} y={PAD_TOP + Math.round(PLOT_H / 2)} textAnchor="middle">
            {empty}
          </text>
        ) : null}
      </svg>
    </figure>
  );
}
