// One action at a time, its busy state and the text of its failure: what every button that calls the
// API needs (Install, Open, Take, a CSV download, Load more) and what every form runs on
// (components/form.tsx). The failure is kept, never thrown; `onError` also hears of it (a toast).
import { useCallback, useRef, useState } from 'react';
import { errorText } from './http';

export interface ActionOptions {
  /** Told of each failure with its text (errorText), besides `error`: e.g. to toast it. */
  onError?: (text: string, err: unknown) => void;
}

export interface Action {
  /** True while an action runs: its button is disabled. */
  busy: boolean;
  /** The text of the last failure (the server's message), until the next run or `reset`. */
  error: string | null;
  /** What the last failure threw (a form reads the field a 400 answer names), or null. */
  cause: unknown;
  /**
   * Runs `work` unless an action of this hook is running already (a second click does nothing).
   * `work` starts at once, inside the caller's event (a tab it opens is not blocked).
   */
  run: (work: () => Promise<unknown>) => Promise<void>;
  /** Forgets the last failure. */
  reset: () => void;
}

export function useAction(options: ActionOptions = {}): Action {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ text: string; cause: unknown } | null>(null);
  const running = useRef(false);
  const latest = useRef(options);
  latest.current = options;

  const reset = useCallback(() => setFailure(null), []);

  const run = useCallback(async (work: () => Promise<unknown>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setFailure(null);
    try {
      await work();
    } catch (err) {
      const text = errorText(err);
      setFailure({ text, cause: err });
      latest.current.onError?.(text, err);
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);

  return { busy, error: failure?.text ?? null, cause: failure?.cause ?? null, run, reset };
}
