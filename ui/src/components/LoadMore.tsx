import type { ReactNode } from 'react';
import type { ListPage } from '../api/types';
import { useT } from '../lib/i18n';
import type { AsyncState } from '../lib/useAsync';
import { useAction } from '../lib/useAction';
import { ErrorNote } from './placeholders';

/**
 * The button that loads more of a list, shown while fewer than `total` items are loaded: the next
 * page below the list, or (`above`) earlier items above it, as a conversation's history. `load`
 * fetches and adds them, one load at a time; its failure shows between the button and the list.
 */
export function MoreButton({
  shown,
  total,
  load,
  label,
  above = false,
  className = 'button ghost',
}: {
  shown: number;
  total: number;
  load: () => Promise<void>;
  label?: ReactNode;
  above?: boolean;
  className?: string;
}) {
  const t = useT();
  const more = useAction();
  const error = more.error ? <ErrorNote text={more.error} /> : null;
  const button =
    shown < total ? (
      <div className="center-row">
        <button type="button" className={className} disabled={more.busy} onClick={() => void more.run(load)}>
          {label ?? t('load_more')}
        </button>
      </div>
    ) : null;
  return above ? (
    <>
      {button}
      {error}
    </>
  ) : (
    <>
      {error}
      {button}
    </>
  );
}

/**
 * The "Load more" button of a loaded list: `fetchPage(offset)` fetches the next page, which is
 * appended; its failure shows above the button.
 */
export function LoadMore<T>({ state, fetchPage }: { state: AsyncState<ListPage<T>>; fetchPage: (offset: number) => Promise<ListPage<T>> }) {
  const shown = state.data?.items.length ?? 0;
  const load = async () => {
    if (!state.data) return;
    const page = await fetchPage(shown);
    state.setData((prev) => ({ items: [...(prev?.items ?? []), ...(page.items ?? [])], total: page.total }));
  };
  return <MoreButton shown={shown} total={state.data?.total ?? 0} load={load} />;
}
