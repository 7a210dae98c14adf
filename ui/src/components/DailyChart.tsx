// Income and expense by day as a hand-drawn SVG bar chart (no chart library: this page's chunk
// stays small and nothing is added to the first load). Integer coordinates only, so the markup is
// the same wherever it renders.
import type { WalletDay } from '../api/types';
import { useT } from '../lib/i18n';
import { formatCoins } from '../lib/format';

const WIDTH = 720;
const HEIGHT = 200;
const PAD_LEFT = 64;
const PAD_BOTTOM = 24;
const PAD_TOP = 12;
const PLOT_H = HEIGHT - PAD_BOTTOM - PAD_TOP;

/** A round top for the axis: 1, 2 or 5 times a power of ten, at least `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 100;
  const power = Math.pow(10, Math.floor(Math.log10(max)));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= max) return step * power;
  }
  return 10 * power;
}

/** `incomeOnly`: the legend names the income alone, as this label (the market's fee income). */
export function DailyChart({ days, incomeOnly }: { days: WalletDay[]; incomeOnly?: string }) {
  const t = useT();
  const n = days.length;
  const income = days.reduce((s, d) => s + d.income, 0);
  const expense = days.reduce((s, d) => s + d.expense, 0);
  const top = niceMax(Math.max(0, ...days.map((d) => Math.max(d.income, d.expense))));
  const slot = n > 0 ? Math.floor((WIDTH - PAD_LEFT) / n) : 0;
  const bar = Math.max(1, Math.floor((slot - 4) / 2));
  const y = (v: number) => PAD_TOP + PLOT_H - Math.round((v / top) * PLOT_H);
  const label = t('wallet_chart_label', { income: formatCoins(income), expense: formatCoins(expense), n });
  return (
    <figure className="wallet-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label} preserveAspectRatio="xMidYMid meet">
        {[0, top / 2, top].map((v) => (
          <g key={v}>
            <line className="grid" x1={PAD_LEFT} x2={WIDTH} y1={y(v)} y2={y(v)} />
            <text className="axis" x={PAD_LEFT - 8} y={y(v) + 4} textAnchor="end">
              {formatCoins(v)}
            </text>
          </g>
        ))}
        {days.map((d, i) => {
          const x = PAD_LEFT + i * slot + 2;
          const tip = t('wallet_chart_day', { day: d.day, income: formatCoins(d.income), expense: formatCoins(d.expense) });
          return (
            <g key={d.day}>
              <title>{tip}</title>
              {d.income > 0 ? <rect className="income" x={x} y={y(d.income)} width={bar} height={y(0) - y(d.income)} /> : null}
              {d.expense > 0 ? <rect className="expense" x={x + bar} y={y(d.expense)} width={bar} height={y(0) - y(d.expense)} /> : null}
              {i % 5 === 0 || i === n - 1 ? (
                <text className="axis" x={x + bar} y={HEIGHT - 6} textAnchor="middle">
                  {d.day.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption className="chart-legend">
        <span className="legend income">
          {incomeOnly ?? t('wallet_income')} {formatCoins(income)}
        </span>
        {incomeOnly ? null : (
          <span className="legend expense">
            {t('wallet_expense')} {formatCoins(expense)}
          </span>
        )}
      </figcaption>
    </figure>
  );
}
