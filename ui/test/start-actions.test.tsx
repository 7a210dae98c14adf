// @vitest-environment happy-dom
// The buttons that start something and show its failure: the operator's one-click actions
// (unsuspend, hide/show, top pick) on lib/useAction with the form-error block (components/form: ActionError).
import { act } from 'react';
import { describe, expect, it, vi } from 'vitest';
import type { OpsApp, OpsUser } from '../src/api/types';
import { ActionError } from '../src/components/form';
import AppsPage from '../src/pages/operator/AppsPage';
import PeoplePage from '../src/pages/operator/PeoplePage';
import { click, envelope, settle, show, signedInEachTest, waitFor } from './connect-render';
import { fireEvent } from './dom';

type Route = (method: string, body: unknown) => Response | Promise<Response>;

/** Answers each request by the first route whose path the URL contains (method and JSON body given). */
function serve(routes: Record<string, Route>) {
  const calls: string[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      const method = init?.method ?? 'GET';
      calls.push(`${method} ${url}`);
      const path = Object.keys(routes).find((p) => url.includes(p));
      if (!path) return envelope(null, 404, 'not found');
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
      return routes[path](method, body);
    }),
  );
  return calls;
}

/** A response that arrives when `release` is called: the button's busy state can be seen meanwhile. */
function held() {
  let release!: (r: Response) => void;
  const response = new Promise<Response>((res) => {
    release = res;
  });
  return { response, release };
}

const buttonByText = (root: ParentNode, text: string) =>
  [...root.querySelectorAll('button')].find((b) => b.textContent?.trim() === text) as HTMLButtonElement;

signedInEachTest();

describe('ActionError', () => {
  it('shows the failure in the form-error block, and nothing without one', async () => {
    const el = await show(
      <>
        <ActionError action={{ error: null }} />
        <ActionError action={{ error: '余额不足' }} />
      </>,
    );
    expect(el.innerHTML).toBe('<p class="form-error" role="alert">余额不足</p>');
  });
});

const user = (over: Partial<OpsUser>): OpsUser =>
  ({ id: 'u1', email: 'ann@example.com', name: 'Ann', balance: 0, devices: 0, created_at: '2025-01-01T00:00:00Z', operator: false, suspended: true, suspended_reason: 'spam', verified: true, ...over }) as OpsUser;

describe('operator one-click actions', () => {
  it('unsuspend: one at a time, disabled while it runs, its failure shown above the list', async () => {
    const answer = held();
    const calls = serve({ '/users/u1/unsuspend': () => answer.response, '/users': () => envelope({ items: [user({})], total: 1 }) });
    const el = await show(<PeoplePage />);
    await waitFor(() => expect(buttonByText(el, 'Unsuspend')).toBeTruthy());
    const button = buttonByText(el, 'Unsuspend');
    await act(async () => {
      fireEvent.click(button);
      fireEvent.click(button);
    });
    expect(calls.filter((c) => c.includes('/unsuspend'))).toHaveLength(1);
    expect(button.disabled).toBe(true);
    await act(async () => answer.release(envelope(null, 403, 'Operators only')));
    await settle();
    expect(el.querySelector('.form-error[role=alert]')?.textContent).toBe('Operators only');
    expect(button.disabled).toBe(false);
  });

  it('unsuspend succeeds: the row shows the person active, no error', async () => {
    serve({ '/users/u1/unsuspend': () => envelope(user({ suspended: false, suspended_reason: null })), '/users': () => envelope({ items: [user({})], total: 1 }) });
    const el = await show(<PeoplePage />, 'zh');
    await waitFor(() => expect(el.querySelector('[data-email="ann@example.com"] button')).not.toBeNull());
    await click(el.querySelector<HTMLButtonElement>('[data-email="ann@example.com"] button')!);
    await waitFor(() => expect(el.querySelector('[data-email="ann@example.com"] .tag.danger')).toBeNull());
    expect(el.querySelector('[role=alert]')).toBeNull();
  });

  it('hide and top pick share one guard: both disabled while one runs; a failure is shown', async () => {
    const answer = held();
    const opsApp = { id: 'grafana', name_en: 'Grafana', name_zh: 'Grafana', icon_url: '/i.png', category: 'Work', version: '1', image: 'grafana/grafana', listed: true, top_pick: false, origin: 'catalogue' } as OpsApp;
    serve({ '/ops/v1/apps/grafana': () => answer.response, '/ops/v1/apps': () => envelope({ items: [opsApp], total: 1 }) });
    const el = await show(<AppsPage />);
    await waitFor(() => expect(buttonByText(el, 'Hide')).toBeTruthy());
    await click(buttonByText(el, 'Hide'));
    expect(buttonByText(el, 'Hide').disabled).toBe(true);
    expect(buttonByText(el, 'Make a top pick').disabled).toBe(true);
    await act(async () => answer.release(envelope(null, 400, 'Unknown app')));
    await settle();
    expect(el.querySelector('.form-error[role=alert]')?.textContent).toBe('Unknown app');
    expect(buttonByText(el, 'Hide').disabled).toBe(false);
  });
});
