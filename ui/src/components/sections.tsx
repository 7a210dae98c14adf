// The frame of page content: the page header, titled sections, loaded lists and tables.
import type { ReactNode } from 'react';
import type { ListPage } from '../api/types';
import type { AsyncState } from '../lib/useAsync';
import { EmptyState, ErrorNote, SkeletonLines } from './placeholders';

export function PageHeader({ title, subtitle, actions }: { title: string; subtitle?: string; actions?: ReactNode }) {
  return (
    <div className="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle ? <p className="muted">{subtitle}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </div>
  );
}

/** A section headed by an h2 that labels it. */
export function Section({ id, title, className, children }: { id: string; title: string; className?: string; children: ReactNode }) {
  return (
    <section className={className} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A loaded list: its error (with retry), a skeleton while loading, the items, or the empty state. */
export function AsyncItems<T>({
  state,
  emptyIcon,
  emptyTitle,
  emptyText,
  emptyLevel,
  children,
}: {
  state: AsyncState<ListPage<T>>;
  emptyIcon: string;
  emptyTitle: string;
  /** What the empty state explains (how things arrive here). */
  emptyText?: string;
  /** The empty state's heading level: 2 for a list right under the page's h1 (EmptyState). */
  emptyLevel?: 2 | 3;
  children: (items: T[]) => ReactNode;
}) {
  const items = state.data?.items ?? [];
  return (
    <>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        children(items)
      ) : !state.error ? (
        <EmptyState icon={emptyIcon} title={emptyTitle} text={emptyText} level={emptyLevel} />
      ) : null}
    </>
  );
}

/**
 * A table of rows with one action column last, labelled for screen readers only. A `false` column
 * is left out (its cells must be left out of the rows too).
 */
export function ActionTable({ columns, actionLabel, children }: { columns: (string | false)[]; actionLabel: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            {columns.map((c, i) =>
              c === false ? null : (
                <th key={i} scope="col">
                  {c}
                </th>
              ),
            )}
            <th scope="col">
              <span className="visually-hidden">{actionLabel}</span>
            </th>
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
