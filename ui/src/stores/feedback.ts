import { create } from 'zustand';
import { errorText } from '../lib/http';
import {
  LOADING_FADE_MS,
  NOTIFICATION_DURATION_MS,
  TOAST_DURATION_MS,
  type NOTIFICATION_POSITIONS,
  type TOAST_TYPES,
} from '../constants';

type ToastType = (typeof TOAST_TYPES)[number];
type NoticePosition = (typeof NOTIFICATION_POSITIONS)[number];

interface Toast {
  id: number;
  type: ToastType;
  text: string;
}

export interface Notice {
  id: number;
  type: ToastType;
  title: string;
  text: string;
  position: NoticePosition;
}

interface FeedbackState {
  toasts: Toast[];
  notices: Notice[];
  /** Reference count of open loading overlays. */
  loadingCount: number;
  /** True while the overlay is shown or fading out. */
  loadingVisible: boolean;
  /** Route progress: null when idle, else 0..1. */
  progress: number | null;
}

export const useFeedback = create<FeedbackState>()(() => ({
  toasts: [],
  notices: [],
  loadingCount: 0,
  loadingVisible: false,
  progress: null,
}));

let nextId = 1;
const timers = new Map<number, ReturnType<typeof setTimeout>>();

export function dismissToast(id: number) {
  const t = timers.get(id);
  if (t) clearTimeout(t);
  timers.delete(id);
  useFeedback.setState((s) => ({ toasts: s.toasts.filter((x) => x.id !== id) }));
}

/** Shows a toast (docs/product.md §9: 3000 ms by default). Safe to call on the server: it does nothing there. */
export function toast(type: ToastType, text: string, durationMs: number = TOAST_DURATION_MS): number {
  if (typeof window === 'undefined') return 0;
  const id = nextId++;
  useFeedback.setState((s) => ({ toasts: [...s.toasts, { id, type, text }] }));
  if (durationMs > 0) timers.set(id, setTimeout(() => dismissToast(id), durationMs));
  return id;
}

export function dismissNotice(id: number) {
  const t = timers.get(id);
  if (t) clearTimeout(t);
  timers.delete(id);
  useFeedback.setState((s) => ({ notices: s.notices.filter((x) => x.id !== id) }));
}

/** Shows a corner notification (4500 ms by default). */
export function notify(
  opts: { type?: ToastType; title: string; text?: string; position?: NoticePosition },
  durationMs: number = NOTIFICATION_DURATION_MS,
): number {
  if (typeof window === 'undefined') return 0;
  const id = nextId++;
  const notice: Notice = {
    id,
    type: opts.type ?? 'info',
    title: opts.title,
    text: opts.text ?? '',
    position: opts.position ?? 'top-right',
  };
  useFeedback.setState((s) => ({ notices: [...s.notices, notice] }));
  if (durationMs > 0) timers.set(id, setTimeout(() => dismissNotice(id), durationMs));
  return id;
}

let fadeTimer: ReturnType<typeof setTimeout> | null = null;

/** Opens the reference-counted loading overlay; call the returned function once to close it. */
export function openLoading(): () => void {
  if (fadeTimer) {
    clearTimeout(fadeTimer);
    fadeTimer = null;
  }
  useFeedback.setState((s) => ({ loadingCount: s.loadingCount + 1, loadingVisible: true }));
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    const count = Math.max(0, useFeedback.getState().loadingCount - 1);
    useFeedback.setState({ loadingCount: count });
    if (count === 0) {
      fadeTimer = setTimeout(() => {
        fadeTimer = null;
        if (useFeedback.getState().loadingCount === 0) useFeedback.setState({ loadingVisible: false });
      }, LOADING_FADE_MS);
    }
  };
}

/** Runs `work` under the loading overlay. */
export async function withLoading<T>(work: () => Promise<T>): Promise<T> {
  const close = openLoading();
  try {
    return await work();
  } finally {
    close();
  }
}

/** Shows a failure's text as an error toast (`onError` of lib/useAction). */
export const toastError = (text: string) => void toast('error', text);

/** Runs `work`, showing its failure as an error toast. */
export async function toastFailure(work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    toastError(errorText(err));
  }
}
