// @vitest-environment happy-dom
// The buttons that start something and show its failure: the Install and Rent dialogs' one footer
// (pages/market: StartFooter, disabled until the choice is complete and while the request runs),
// and the operator's one-click actions (unsuspend, hide/show, top pick) on lib/useAction with the
// form-error block (components/form: ActionError).
import { act } from 'react';
import { describe, expect, it, vi } from 'vitest';
import type { App, DeviceFit, OpsApp, OpsUser } from '../src/api/types';
import { ActionError } from '../src/components/form';
import { InstallDialog, StartFooter } from '../src/pages/market/installDialog';
import { RentDialog } from '../src/pages/market/rentDialog';
import { useSession } from '../src/stores/session';
import AppsPage from '../src/pages/operator/AppsPage';
import PeoplePage from '../src/pages/operator/PeoplePage';
import { click, envelope, settle, show, signedInEachTest, unmount, waitFor } from './connect-render';
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

const fit = (over: Partial<DeviceFit>): DeviceFit =>
  ({
    device_id: 'ZB-1',
    device_name: 'Studio box',
    device_status: 'online',
    fits: true,
    free: { cpu_cores: 4, memory_bytes: 8 << 30, disk_bytes: 100 << 30, gpu_count: 1 },
    gaps: [],
    gpus: ['RTX 4090'],
    price_per_hour: null,
    reason: null,
    gpus_free: 1,
    spec: { cpu_cores: 8, memory_bytes: 16 << 30, disk_bytes: 200 << 30, gpus: [] },
    reliability: { uptime_7d: null, uptime_30d: null },
    distance_km: null,
    location: null,
    ...over,
  }) as DeviceFit;

const app = { id: 'grafana', name: 'Grafana' } as App;

signedInEachTest();

describe('StartFooter', () => {
  const footer = (ready: boolean, busy: boolean, lang: 'en' | 'zh' = 'en') => {
    const onCancel = vi.fn();
    const onStart = vi.fn();
    return { onCancel, onStart, shown: show(<StartFooter label="Rent" ready={ready} busy={busy} onCancel={onCancel} onStart={onStart} />, lang) };
  };

  it('offers Cancel and the start button, enabled once ready and not busy', async () => {
    const { onCancel, onStart, shown } = footer(true, false);
    const el = await shown;
    const [cancel, start] = [...el.querySelectorAll('button')];
    expect([cancel.textContent, cancel.className, start.textContent, start.className]).toEqual(['Cancel', 'button ghost', 'Rent', 'button primary']);
    expect(start.disabled).toBe(false);
    await click(start);
    await click(cancel);
    expect(onStart).toHaveBeenCalledTimes(1);
    expect(onCancel).toHaveBeenCalledTimes(1);
  });

  it('is disabled while the choice is incomplete and while the request runs; Cancel never is', async () => {
    for (const [ready, busy] of [
      [false, false],
      [true, true],
      [false, true],
    ]) {
      const { onStart, shown } = footer(ready, busy, 'zh');
      const el = await shown;
      const [cancel, start] = [...el.querySelectorAll('button')];
      expect(cancel.textContent).toBe('取消');
      expect(cancel.disabled).toBe(false);
      expect(start.disabled).toBe(true);
      await click(start);
      expect(onStart).not.toHaveBeenCalled();
      await unmount();
    }
  });
});

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

describe('Install dialog', () => {
  it('cannot install without a device that fits, and says why not', async () => {
    serve({ '/apps/fit': () => envelope([fit({ fits: false, reason: 'offline' })]) });
    await show(<InstallDialog app={app} open onClose={() => {}} />);
    await waitFor(() => expect(document.body.querySelector('[data-device="ZB-1"]')).not.toBeNull());
    expect(buttonByText(document.body, 'Install').disabled).toBe(true);
    expect(document.body.querySelector('[data-device="ZB-1"] .fit-bad')?.textContent).toBe('Offline');
    expect(document.body.querySelector<HTMLInputElement>('[data-device="ZB-1"] input')!.disabled).toBe(true);
  });

  it('installs on the fitting device, disabled while it runs, and shows the server’s refusal', async () => {
    const answer = held();
    const calls = serve({ '/apps/fit': () => envelope([fit({})]), '/apps/install': () => answer.response });
    const onClose = vi.fn();
    await show(<InstallDialog app={app} open onClose={onClose} />);
    await waitFor(() => expect(buttonByText(document.body, 'Install').disabled).toBe(false));
    await click(buttonByText(document.body, 'Install'));
    expect(calls).toContain('POST /api/rmp/v1/apps/install');
    expect(buttonByText(document.body, 'Install').disabled).toBe(true);
    await act(async () => answer.release(envelope(null, 409, 'The app is already on this device')));
    await settle();
    expect(document.body.querySelector('.dialog [role=alert]')?.textContent).toBe('The app is already on this device');
    expect(buttonByText(document.body, 'Install').disabled).toBe(false);
    expect(onClose).not.toHaveBeenCalled();
  });
});

describe('Rent dialog', () => {
  it('rents only whole hours from 1 to 720 that the wallet covers', async () => {
    serve({
      '/apps/rent-options': () => envelope([fit({ price_per_hour: 100 })]),
      '/wallet': () => envelope({ available: 250, balance: 250, held: 0, unbilled: 0, income_total: 0, expense_total: 0 }),
    });
    await show(<RentDialog app={app} open onClose={() => {}} />);
    const rent = () => buttonByText(document.body, 'Rent');
    await waitFor(() => expect(document.body.querySelector('[data-testid=rent-total]')?.textContent).toBe('1.00 coins'));
    await waitFor(() => expect(rent().disabled).toBe(false));
    const hours = document.body.querySelector<HTMLInputElement>('#rent-hours')!;
    for (const [typed, disabled] of [
      ['3', true],
      ['2', false],
      ['0', true],
      ['1.5', true],
      ['721', true],
      ['', true],
      ['1', false],
    ] as const) {
      await act(async () => fireEvent.input(hours, typed));
      expect([typed, rent().disabled]).toEqual([typed, disabled]);
    }
    const short = 'Your wallet does not have enough available coins for this rental.';
    expect(document.body.textContent).not.toContain(short);
    await act(async () => fireEvent.input(hours, '3'));
    // Short: the way to coins, the top-up page for a person...
    const note = () => document.body.querySelector('.dialog .form-error');
    expect(note()?.textContent).toBe(`${short} Get coins`);
    expect(note()?.querySelector('a')?.getAttribute('href')).toBe('/wallet/top-up');
    // ...and the company page (its wallet, funded there) in a company context.
    await act(async () => useSession.setState({ smeId: 'company-1' }));
    expect(note()?.textContent).toBe(`${short} Fund the company wallet`);
    expect(note()?.querySelector('a')?.getAttribute('href')).toBe('/company');
  });

  it('sends the price shown, disabled while it runs, and shows the server’s refusal', async () => {
    const answer = held();
    const sent: unknown[] = [];
    serve({
      '/apps/rent-options': () => envelope([fit({ price_per_hour: 100 })]),
      '/apps/rent': (_m, body) => {
        sent.push(body);
        return answer.response;
      },
      '/wallet': () => envelope({ available: 1000, balance: 1000, held: 0, unbilled: 0, income_total: 0, expense_total: 0 }),
    });
    await show(<RentDialog app={app} open onClose={() => {}} />);
    await waitFor(() => expect(buttonByText(document.body, 'Rent').disabled).toBe(false));
    await click(buttonByText(document.body, 'Rent'));
    expect(sent).toEqual([{ app_id: 'grafana', device_id: 'ZB-1', hours: 1, price_per_hour: 100 }]);
    expect(buttonByText(document.body, 'Rent').disabled).toBe(true);
    await act(async () => answer.release(envelope(null, 409, 'The price changed')));
    await settle();
    expect(document.body.querySelector('.dialog [role=alert]')?.textContent).toBe('The price changed');
    expect(buttonByText(document.body, 'Rent').disabled).toBe(false);
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
