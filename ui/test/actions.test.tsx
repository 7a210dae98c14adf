// @vitest-environment happy-dom
// lib/useAction (one action at a time, its busy state and failure text) and the one "more" button of
// lists (components/LoadMore: the next page below a list, earlier messages above a conversation).
import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../src/lib/http';
import { useAction } from '../src/lib/useAction';
import { MoreButton } from '../src/components/LoadMore';
import { click, settle, show, unmount } from './connect-render';

afterEach(unmount);

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function Probe({ work, onError }: { work: () => Promise<void>; onError?: (text: string) => void }) {
  const action = useAction({ onError });
  return (
    <div>
      <button type="button" disabled={action.busy} onClick={() => void action.run(work)}>
        go
      </button>
      {action.error ? <p role="alert">{action.error}</p> : null}
    </div>
  );
}

describe('useAction', () => {
  it('runs one action at a time and is busy while it runs', async () => {
    const pending = deferred();
    const work = vi.fn(() => pending.promise);
    const el = await show(<Probe work={work} />);
    const button = el.querySelector('button')!;
    // Two clicks before React re-renders: the second is refused by the guard, not by `disabled`.
    await act(async () => {
      button.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      button.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    });
    expect(work).toHaveBeenCalledTimes(1);
    expect(button.disabled).toBe(true);
    await act(async () => pending.resolve());
    expect(button.disabled).toBe(false);
    await click(button);
    expect(work).toHaveBeenCalledTimes(2);
  });

  it('keeps the failure text, tells onError, and forgets it on the next run', async () => {
    const onError = vi.fn();
    let fail = true;
    const work = async () => {
      if (fail) throw new ApiError('Insufficient balance', 'api', 409, null);
    };
    const el = await show(<Probe work={work} onError={onError} />);
    await click(el.querySelector('button')!);
    expect(el.querySelector('[role=alert]')?.textContent).toBe('Insufficient balance');
    expect(onError).toHaveBeenCalledWith('Insufficient balance', expect.any(ApiError));
    fail = false;
    await click(el.querySelector('button')!);
    expect(el.querySelector('[role=alert]')).toBeNull();
    expect(onError).toHaveBeenCalledTimes(1);
  });
});

describe('MoreButton', () => {
  const markup = (el: HTMLElement) => [...el.children].map((c) => `${c.tagName.toLowerCase()}.${c.className}`);

  it('shows while fewer than the total are loaded; a failure goes between the button and the list', async () => {
    const load = vi.fn(async () => {
      throw new Error('offline');
    });
    const below = await show(<MoreButton shown={24} total={30} load={load} />);
    expect(below.querySelector('button')?.textContent).toBe('Load more');
    await click(below.querySelector('button')!);
    expect(load).toHaveBeenCalledTimes(1);
    // The next page goes below the list: the error above the button.
    expect(markup(below)).toEqual(['div.error-note', 'div.center-row']);
    await unmount();

    const above = await show(<MoreButton shown={20} total={21} load={load} label="Earlier messages" above className="button ghost small" />);
    await click(above.querySelector('button')!);
    // Earlier items go above the list: the error below the button.
    expect(markup(above)).toEqual(['div.center-row', 'div.error-note']);
    expect(above.querySelector('button')?.className).toBe('button ghost small');
    await unmount();

    const all = await show(<MoreButton shown={3} total={3} load={load} />);
    await settle();
    expect(all.querySelector('button')).toBeNull();
  });
});
