// What shows in place of content: an empty state, an error with a retry, a spinner, skeleton lines.
import type { ReactNode } from 'react';
import { useT } from '../lib/i18n';
import { Icon } from './Icon';

export function EmptyState({ icon = 'app', title, text, action }: { icon?: string; title: string; text?: string; action?: ReactNode }) {
  return (
    <div className="empty-state">
      <span className="empty-icon">
        <Icon name={icon} size={28} />
      </span>
      {/* h2: right under a page's h1 as well as inside a section (issue 26: h1 → h3 skipped a level). */}
      <h2 className="empty-title">{title}</h2>
      {text ? <p>{text}</p> : null}
      {action}
    </div>
  );
}

export function Spinner({ label }: { label?: string }) {
  return (
    <span className="spinner-wrap" role="status">
      <span className="spinner" aria-hidden="true" />
      {label ? <span className="visually-hidden">{label}</span> : null}
    </span>
  );
}

export function SkeletonLines({ lines = 3 }: { lines?: number }) {
  return (
    <div className="skeleton-lines" aria-hidden="true">
      {Array.from({ length: lines }, (_, i) => (
        <span key={i} className="skeleton" style={{ width: `${90 - i * 15}%` }} />
      ))}
    </div>
  );
}

export function ErrorNote({ text, onRetry }: { text: string; onRetry?: () => void }) {
  const t = useT();
  return (
    <div className="error-note" role="alert">
      <Icon name="warning" size={18} />
      <span>{text}</span>
      {onRetry ? (
        <button type="button" className="button ghost small" onClick={onRetry}>
          {t('retry')}
        </button>
      ) : null}
    </div>
  );
}
