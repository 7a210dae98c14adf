// Toasts, corner notifications, the loading overlay and the route progress bar: rendered once at the root.
import { useEffect, useState } from 'react';
import {
  BASE_Z_INDEX,
  LOADING_FADE_MS,
  NOTIFICATION_GAP_PX,
  NOTIFICATION_POSITIONS,
  PROGRESS_SPEED_MS,
  TOAST_OFFSET_PX,
} from '../constants';
import { useT } from '../lib/i18n';
import { dismissNotice, dismissToast, useFeedback } from '../stores/feedback';
import { Icon } from './Icon';

export function Toasts() {
  const toasts = useFeedback((s) => s.toasts);
  // The offset is counted below the header: a toast never covers the switcher or the bell (issue 26).
  const t = useT();
  return (
    <div className="toasts" style={{ top: `calc(var(--header) + ${TOAST_OFFSET_PX}px)`, zIndex: BASE_Z_INDEX + 3 }} aria-live="polite" role="status">
      {toasts.map((toast) => (
        <div key={toast.id} className={`toast toast-${toast.type}`} role={toast.type === 'error' ? 'alert' : undefined}>
          <Icon name={toast.type} size={18} />
          <span className="toast-text">{toast.text}</span>
          <button type="button" className="icon-button small" aria-label={t('dismiss')} onClick={() => dismissToast(toast.id)}>
            <Icon name="close" size={14} />
          </button>
        </div>
      ))}
    </div>
  );
}

export function Notices() {
  const notices = useFeedback((s) => s.notices);
  const t = useT();
  return (
    <>
      {NOTIFICATION_POSITIONS.map((pos) => {
        const items = notices.filter((n) => n.position === pos);
        if (!items.length) return null;
        return (
          <div
            key={pos}
            className={`notices notices-${pos}`}
            style={{ gap: NOTIFICATION_GAP_PX, zIndex: BASE_Z_INDEX + 2 }}
            aria-live="polite"
          >
            {items.map((n) => (
              <div key={n.id} className={`notice notice-${n.type}`} role={n.type === 'error' ? 'alert' : 'status'}>
                <Icon name={n.type} size={20} />
                <div className="notice-body">
                  <strong>{n.title}</strong>
                  {n.text ? <p>{n.text}</p> : null}
                </div>
                <button type="button" className="icon-button small" aria-label={t('dismiss')} onClick={() => dismissNotice(n.id)}>
                  <Icon name="close" size={14} />
                </button>
              </div>
            ))}
          </div>
        );
      })}
    </>
  );
}

export function LoadingOverlay() {
  const count = useFeedback((s) => s.loadingCount);
  const visible = useFeedback((s) => s.loadingVisible);
  const t = useT();
  if (!visible) return null;
  return (
    <div
      className={count > 0 ? 'loading-overlay' : 'loading-overlay fading'}
      style={{ zIndex: BASE_Z_INDEX, transitionDuration: `${LOADING_FADE_MS}ms` }}
      role="progressbar"
      aria-busy={count > 0}
      aria-label={t('loading')}
    >
      <span className="spinner large" />
    </div>
  );
}

export function ProgressBar() {
  const progress = useFeedback((s) => s.progress);
  const [shown, setShown] = useState<number | null>(null);
  useEffect(() => {
    if (progress !== null) {
      setShown(progress);
      return;
    }
    if (shown === null) return;
    setShown(1);
    const timer = setTimeout(() => setShown(null), PROGRESS_SPEED_MS);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [progress]);
  if (shown === null) return null;
  return (
    <div className="progress-bar" style={{ zIndex: BASE_Z_INDEX + 4 }} aria-hidden="true">
      <div
        className="progress-bar-fill"
        style={{ transform: `scaleX(${shown})`, transitionDuration: `${PROGRESS_SPEED_MS}ms`, opacity: shown >= 1 ? 0 : 1 }}
      />
    </div>
  );
}
