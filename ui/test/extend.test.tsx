// @vitest-environment happy-dom
// A rental's Extend on its page (pages/apps/extendForm: issue 39): the hours and what the wallet
// will hold for them, the request with its Idempotency-Key, the hours checked before it is sent,
// the server's refusal shown, in English and Chinese.
import { describe, expect, it, vi } from 'vitest';
import type { Installation } from '../src/api/types';
import { ExtendForm } from '../src/pages/apps/extendForm';
import { click, envelope, settle, show, signedInEachTest, type, waitFor } from './connect-render';

signedInEachTest();

const inst = {
  id: 'inst-1',
  kind: 'rent',
  status: 'running',
  rental: { price_per_hour: 600, started_at: '2026-11-28T10:00:00Z', ends_at: '2026-11-28T11:00:00Z', billed: 0, unbilled: 0, extendable: true },
} as unknown as Installation;

function serve(answer: (body: unknown) => Response) {
  const calls: { url: string; key: string | null; body: unknown }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
      const headers = new Headers(init?.headers);
      calls.push({ url: String(input), key: headers.get('Idempotency-Key'), body });
      return answer(body);
    }),
  );
  return calls;
}

const hoursInput = (el: HTMLElement) => el.querySelector<HTMLInputElement>('input[type=number]')!;
const submit = (el: HTMLElement) => el.querySelector<HTMLButtonElement>('button[type=submit]')!;

describe('Extend', () => {
  it('says what the wallet will hold and when the rental then ends, and extends with a key', async () => {
    const calls = serve(() => envelope({ ...inst, rental: { ...inst.rental, ends_at: '2026-11-28T13:00:00Z' } }));
    const onExtended = vi.fn();
    const el = await show(<ExtendForm inst={inst} focus={false} onExtended={onExtended} />);
    expect(el.querySelector('label')?.textContent).toBe('Extend by (hours)');
    await type(hoursInput(el), '2');
    expect(el.querySelector('[data-testid=extend-note]')?.textContent).toBe(
      'Your wallet will hold 12.00 coins more for 2 h; the rental then ends at 2026-11-28 13:00 (UTC).',
    );
    expect(submit(el).textContent).toBe('Extend');
    await click(submit(el));
    await waitFor(() => expect(onExtended).toHaveBeenCalledTimes(1));
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe('/api/rmp/v1/apps/inst-1/extend');
    expect(calls[0].body).toEqual({ hours: 2 });
    expect(calls[0].key).toMatch(/^extend-/);
    expect(onExtended.mock.calls[0][0].rental.ends_at).toBe('2026-11-28T13:00:00Z');
  });

  it('checks the hours before sending, and shows the refusal of a wallet that cannot hold it (zh)', async () => {
    const calls = serve(() => envelope({ available: 100, needed: 600 }, 409, '余额不足：可用 1.00 币，需要 6.00 币'));
    const el = await show(<ExtendForm inst={inst} focus onExtended={() => {}} />, 'zh');
    expect(el.querySelector('label')?.textContent).toBe('续租时长（小时）');
    for (const bad of ['0', '721', '1.5', '']) {
      await type(hoursInput(el), bad);
      await click(submit(el));
      expect(el.querySelector('.field-error')?.textContent).toBe('请输入 1 到 720 之间的整数小时');
    }
    expect(calls).toHaveLength(0);
    await type(hoursInput(el), '1');
    await click(submit(el));
    await settle();
    await waitFor(() => expect(el.querySelector('.form-error')?.textContent).toBe('余额不足：可用 1.00 币，需要 6.00 币'));
    expect(submit(el).textContent).toBe('续租');
    expect(calls).toHaveLength(1);
  });
});
