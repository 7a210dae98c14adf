import { useState } from 'react';
import type { ListPage } from '../api/types';
import { errorText } from '../lib/http';
import { useT } from '../lib/i18n';
import type { AsyncState } from '../lib/useAsync';
import { ErrorNote } from './placeholders';

/**
 * The "Load more" button of a loaded list, shown while the list has fewer items than its total:
 * `fetchPage(offset)` fetches the next page, which is appended; its failure shows above the button.
 */
export function LoadMore<T>({ state, fetchPage }: { state: AsyncState<ListPage<T>>; fetchPage: (offset: number) => Promise<ListPage<T>> }) {
  const t = useT();
  const [more, setMore] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  const shown = state.data?.items.length ?? 0;
  const loadMore = async () => {
    if (!state.data) return;
    setMore({ busy: true, error: null });
    try {
      const page = await fetchPage(shown);
      state.setData((prev) => ({ items: [...(prev?.items ?? []), ...(page.items ?? [])], total: page.total }));
      setMore({ busy: false, error: null });
    } catch (err) {
      setMore({ busy: false, error: errorText(err) });
    }
  };
  return (
    <>
      {more.error ? <ErrorNote text={more.error} /> : null}
      {shown < (state.data?.total ?? 0) ? (
        <div className="center-row">
          <button type="button" className="button ghost" disabled={more.busy} onClick={() => void loadMore()}>
            {t('load_more')}
          </button>
        </div>
      ) : null}
    </>
  );
}
