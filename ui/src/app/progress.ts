// Route-change progress bar (docs/product.md §9: starts at 0.3, moves every 500 ms). Reference-counted.
import { PROGRESS_MINIMUM, PROGRESS_SPEED_MS } from '../constants';
import { useFeedback } from '../stores/feedback';

let active = 0;
let trickle: ReturnType<typeof setInterval> | null = null;

export function startProgress() {
  if (typeof window === 'undefined') return;
  active++;
  if (active > 1) return;
  useFeedback.setState({ progress: PROGRESS_MINIMUM });
  trickle = setInterval(() => {
    const p = useFeedback.getState().progress;
    if (p === null) return;
    useFeedback.setState({ progress: Math.min(0.95, p + (1 - p) * 0.1) });
  }, PROGRESS_SPEED_MS);
}

/** Finishes (or, on a route error, stops) the bar. */
export function doneProgress() {
  if (active === 0) return;
  active--;
  if (active > 0) return;
  if (trickle) clearInterval(trickle);
  trickle = null;
  useFeedback.setState({ progress: null });
}

export function resetProgress() {
  active = 1;
  doneProgress();
}
