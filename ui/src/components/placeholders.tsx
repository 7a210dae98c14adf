// What shows in place of content: an empty state, an error with a retry, a spinner, skeleton lines.
import type { ReactNode } from 'react';
import { useT } from '../lib/i18n';
import { Icon } from './Icon';

/**
 * An empty list's message. `level`: its heading's level, 3 inside a titled section (the default),
 * 2 right under a page's h1 (issue 26: h1 → h3 skipped a level).
 */
export function EmptyState({
  icon = 'app',
  title,
  text,
  action,
  level = 3,
}: {
  icon?: string;
  title: string;
  text?: string;
  action?: ReactNode;
  level?: 2 | 3;
}) {
  const Heading = level === 2 ? 'h2' : 'h3';
  return (
    <div className="empty-state">
      <span className="empty-icon">
        <Icon name={icon} size={28} />
      </span>
      <Heading className="empty-title">{title}</Heading>
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
