// @vitest-environment happy-dom
// Snapshots (issue 40) on the installation page and /app's "Kept data": the list in words (time,
// version, size, kind, where it is kept, state with progress, a failure's reason), Take a snapshot,
// Keep on the market, Download (only from the market), Restore (the device-fit list, the gaps of a
// refusal, the new installation's page), Delete (asks first; a refusal shown), the daily backup
// (checked before it is sent), in English and Chinese.
import { describe, expect, it, vi } from 'vitest';
import { useLocation } from 'react-router';
import type { Installation, Snapshot } from '../src/api/types';
import { enSnapshots } from '../src/i18n/snapshots.en';
import { zhSnapshots } from '../src/i18n/snapshots.zh';
import { SnapshotsSection, parseKeep } from '../src/pages/apps/SnapshotsSection';
import { keptSnapshots, KeptData } from '../src/pages/apps/KeptData';
import { snapshotFileName } from '../src/pages/apps/snapshotList';
import { click, envelope, settle, show, signedInEachTest, type, waitFor } from './connect-render';

signedInEachTest();

const inst = {
  id: 'inst-1',
  app_id: 'grafana',
  app_name: 'Grafana',
  kind: 'own',
  status: 'running',
  actions: ['stop', 'restart', 'snapshot', 'uninstall'],
  device_id: 'BOX1',
  device_name: 'garage',
} as unknown as Installation;

function snap(over: Partial<Snapshot> = {}): Snapshot {
  return {
    id: 'S1',
    installation_id: 'inst-1',
    app_id: 'grafana',
    app_name: 'Grafana',
    icon_url: null,
    version: '1.0.0',
    device_id: 'BOX1',
    device_name: 'garage',
    created_at: '2026-11-28T10:30:00Z',
    size: 3 * 1024 * 1024,
    status: 'ready',
    progress: null,
    where: 'box',
    on_box: true,
    uploading: false,
    kind: 'manual',
    expires_at: null,
    restoring: false,
    sha256: 'ab'.repeat(32),
    reason: null,
    reason_code: null,
    installation_present: true,
    ...over,
  };
}

type Call = { method: string; url: string; body: unknown; key: string | null };
/** Answers by "METHOD path" (the query left out); an unknown call fails the test. */
function serve(routes: Record<string, (body: unknown) => Response>) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      const url = String(input);
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
      calls.push({ method, url, body, key: new Headers(init?.headers).get('Idempotency-Key') });
      const answer = routes[`${method} ${url.split('?')[0]}`];
      if (!answer) throw new Error(`unexpected ${method} ${url}`);
      return answer(body);
    }),
  );
  return calls;
}

const list = (items: Snapshot[], backups = { enabled: false, keep: 7 }) => envelope({ items, total: items.length, backups });
const row = (el: HTMLElement, id: string) => el.querySelector<HTMLElement>(`[data-snapshot="${id}"]`)!;
const button = (scope: ParentNode, name: string) => [...scope.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent === name);
const dialog = () => document.querySelector<HTMLElement>('[role=dialog]');

function Where() {
  return <output data-testid="where">{useLocation().pathname + useLocation().search}</output>;
}

describe('snapshot words', () => {
  it('have the same keys in both languages, none empty, placeholders kept', () => {
    expect(Object.keys(zhSnapshots).sort()).toEqual(Object.keys(enSnapshots).sort());
    const ph = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort().join(',');
    for (const k of Object.keys(enSnapshots) as (keyof typeof enSnapshots)[]) {
      expect(enSnapshots[k].trim(), k).not.toBe('');
      expect(zhSnapshots[k].trim(), k).not.toBe('');
      expect(ph(zhSnapshots[k]), k).toBe(ph(enSnapshots[k]));
    }
  });
  it('check the number of backups kept, name downloads', () => {
    expect(parseKeep('7')).toBe(7);
    expect(parseKeep(' 30 ')).toBe(30);
    for (const bad of ['0', '31', '1.5', '', '-1', 'x', '1e1']) expect(parseKeep(bad), bad).toBeNull();
    expect(snapshotFileName(snap())).toBe('grafana-1.0.0-20261128-1030.tar.zst');
  });
});

describe('the Snapshots section', () => {
  it('lists each snapshot in words with the actions its state allows', async () => {
    serve({
      'GET /api/rmp/v1/apps/inst-1/snapshots': () =>
        list([
          snap({ id: 'S3', status: 'creating', size: 0, progress: 40 }),
          snap({ id: 'S2', where: 'market', on_box: true, kind: 'backup' }),
          snap({ id: 'S1', reason: 'The box went offline while copying', reason_code: 'device_offline' }),
          snap({ id: 'S0', status: 'failed', size: 0, reason: 'The box has no room for it', reason_code: 'no_space' }),
        ]),
    });
    const el = await show(<SnapshotsSection inst={inst} onChanged={() => {}} />);
    await waitFor(() => expect(el.querySelectorAll('.snapshot-row')).toHaveLength(4));
    expect(el.querySelector('h2')?.textContent).toBe('Snapshots');
    expect(button(el, 'Take a snapshot')).toBeTruthy();

    const creating = row(el, 'S3');
    expect(creating.querySelector('[data-testid=snapshot-status]')?.textContent).toBe('Creating');
    expect(creating.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow')).toBe('40');
    expect(creating.querySelector('[data-testid=snapshot-size]')).toBeNull();
    expect(button(creating, 'Restore')).toBeUndefined();

    const market = row(el, 'S2');
    expect(market.querySelector('[data-testid=snapshot-time]')?.textContent).toBe('2026-11-28 10:30');
    expect(market.querySelector('[data-testid=snapshot-version]')?.textContent).toBe('1.0.0');
    expect(market.querySelector('[data-testid=snapshot-size]')?.textContent).toBe('3.00 MB');
    expect(market.querySelector('[data-testid=snapshot-kind]')?.textContent).toBe('Daily backup');
    expect(market.querySelector('[data-testid=snapshot-where]')?.textContent).toBe('On the market and the box');
    expect(market.querySelector('[data-testid=snapshot-status]')?.textContent).toBe('Ready');
    expect(button(market, 'Download')).toBeTruthy();
    expect(button(market, 'Keep on the market')).toBeUndefined();

    const box = row(el, 'S1');
    expect(box.querySelector('[data-testid=snapshot-where]')?.textContent).toBe('On the box');
    expect(button(box, 'Keep on the market')).toBeTruthy();
    expect(button(box, 'Download')).toBeUndefined();
    expect(box.textContent).toContain('To download it, keep it on the market first.');
    expect(box.querySelector('[data-reason=device_offline]')?.textContent).toBe('The box went offline while copying');

    const failed = row(el, 'S0');
    expect(failed.querySelector('[data-testid=snapshot-status]')?.textContent).toBe('Failed');
    expect(failed.querySelector('[data-reason=no_space]')?.textContent).toBe('The box has no room for it');
    expect(button(failed, 'Delete')).toBeTruthy();
  });

  it('takes a snapshot, keeps one on the market, downloads it', async () => {
    let items = [snap()];
    const saved: string[][] = [];
    const clicks = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      saved.push([this.getAttribute('href') ?? '', this.download]);
    });
    const calls = serve({
      'GET /api/rmp/v1/apps/inst-1/snapshots': () => list(items),
      'POST /api/rmp/v1/apps/inst-1/actions': () => {
        items = [snap({ id: 'S2', status: 'creating', size: 0, progress: 0 }), ...items];
        return envelope({ ...inst, status: 'snapshotting' });
      },
      'POST /api/rmp/v1/snapshots/S1/upload': () => envelope(snap({ uploading: true, progress: 10 })),
      'POST /api/rmp/v1/snapshots/S1/download-link': () => envelope({ url: '/api/rmp/v1/snapshots/S1/file?ticket=T', expires_at: '2026-11-28T11:00:00Z' }),
    });
    const onChanged = vi.fn();
    const el = await show(<SnapshotsSection inst={inst} onChanged={onChanged} />);
    await waitFor(() => expect(row(el, 'S1')).toBeTruthy());
    await click(button(el, 'Take a snapshot')!);
    await waitFor(() => expect(row(el, 'S2')).toBeTruthy());
    expect(calls.find((c) => c.method === 'POST' && c.url.endsWith('/actions'))?.body).toEqual({ action: 'snapshot' });
    expect(onChanged.mock.calls[0][0].status).toBe('snapshotting');

    await click(button(row(el, 'S1'), 'Keep on the market')!);
    await waitFor(() => expect(row(el, 'S1').querySelector('[data-testid=snapshot-status]')?.textContent).toBe('Keeping on the market'));
    expect(row(el, 'S1').querySelector('[role=progressbar]')?.getAttribute('aria-valuenow')).toBe('10');

    items = [snap({ where: 'market' })];
    await settle(1100);
    await waitFor(() => expect(button(row(el, 'S1'), 'Download')).toBeTruthy(), 4000);
    await click(button(row(el, 'S1'), 'Download')!);
    // The browser's own download of the link (to disk), named as the snapshot.
    await waitFor(() => expect(saved).toEqual([['/api/rmp/v1/snapshots/S1/file?ticket=T', 'grafana-1.0.0-20261128-1030.tar.zst']]));
    clicks.mockRestore();
  });

  it('shows a refused download and a refused delete in the row', async () => {
    serve({
      'GET /api/rmp/v1/apps/inst-1/snapshots': () => list([snap({ where: 'market', restoring: false })]),
      'POST /api/rmp/v1/snapshots/S1/download-link': () => envelope(null, 409, 'Keep it on the market first'),
      'DELETE /api/rmp/v1/snapshots/S1': () => envelope(null, 409, 'It is being restored: delete it once the restore is done'),
    });
    const el = await show(<SnapshotsSection inst={inst} onChanged={() => {}} />);
    await waitFor(() => expect(row(el, 'S1')).toBeTruthy());
    await click(button(row(el, 'S1'), 'Download')!);
    await waitFor(() => expect(row(el, 'S1').querySelector('[role=alert]')?.textContent).toBe('Keep it on the market first'));
    await click(button(row(el, 'S1'), 'Delete')!);
    expect(dialog()?.textContent).toContain('Delete the snapshot of Grafana taken 2026-11-28 10:30?');
    await click(button(dialog()!, 'Delete')!);
    await waitFor(() => expect(row(el, 'S1').querySelector('[role=alert]')?.textContent).toBe('It is being restored: delete it once the restore is done'));
    expect(row(el, 'S1')).toBeTruthy();
  });

  it('deletes a snapshot once confirmed', async () => {
    const calls = serve({
      'GET /api/rmp/v1/apps/inst-1/snapshots': () => list([snap(), snap({ id: 'S2' })]),
      'DELETE /api/rmp/v1/snapshots/S2': () => envelope({}),
    });
    const el = await show(<SnapshotsSection inst={inst} onChanged={() => {}} />);
    await waitFor(() => expect(row(el, 'S2')).toBeTruthy());
    await click(button(row(el, 'S2'), 'Delete')!);
    await click(button(dialog()!, 'Cancel')!);
    expect(calls.filter((c) => c.method === 'DELETE')).toHaveLength(0);
    await click(button(row(el, 'S2'), 'Delete')!);
    await click(button(dialog()!, 'Delete')!);
    await waitFor(() => expect(row(el, 'S2')).toBeNull());
    expect(row(el, 'S1')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/rmp/v1/snapshots/S2']);
  });

  it('restores onto a device that fits and follows the new installation; a refusal shows its gaps', async () => {
    let refuse = true;
    const calls = serve({
      'GET /api/rmp/v1/apps/inst-1/snapshots': () => list([snap({ where: 'market' })]),
      'GET /api/rmp/v1/apps/fit': () =>
        envelope([
          { device_id: 'BOX1', device_name: 'garage', fits: false, reason: 'installed', gaps: [], gpus: [], free: { cpu_cores: 2, memory_bytes: 2 ** 30, disk_bytes: 2 ** 34, gpu_count: 0 } },
          { device_id: 'BOX2', device_name: 'attic', fits: true, reason: null, gaps: [], gpus: [], free: { cpu_cores: 4, memory_bytes: 2 ** 31, disk_bytes: 2 ** 35, gpu_count: 0 } },
        ]),
      'POST /api/rmp/v1/snapshots/S1/restore': () =>
        refuse
          ? envelope({ gaps: [{ field: 'memory_bytes', need: 2 ** 31, have: 2 ** 30 }] }, 409, 'The box does not have room for it')
          : envelope({ ...inst, id: 'inst-2', status: 'preparing' }),
    });
    const el = await show(
      <>
        <SnapshotsSection inst={inst} onChanged={() => {}} />
        <Where />
      </>,
    );
    await waitFor(() => expect(row(el, 'S1')).toBeTruthy());
    await click(button(row(el, 'S1'), 'Restore')!);
    await waitFor(() => expect(dialog()?.querySelector('[data-device=BOX2]')).toBeTruthy());
    expect(dialog()?.querySelector('h2')?.textContent).toBe('Restore Grafana');
    expect(calls.find((c) => c.url.startsWith('/api/rmp/v1/apps/fit'))?.url).toBe('/api/rmp/v1/apps/fit?app_id=grafana');
    expect(dialog()?.querySelector<HTMLInputElement>('[data-device=BOX1] input')?.disabled).toBe(true);
    expect(dialog()?.querySelector<HTMLInputElement>('[data-device=BOX2] input')?.checked).toBe(true);
    expect(dialog()?.querySelector('[data-testid=restore-installed-hint]')?.textContent).toContain('uninstall it there first');
    await click(button(dialog()!, 'Restore')!);
    await waitFor(() => expect(dialog()?.querySelector('[data-testid=restore-gaps]')?.textContent).toBe('What the box lacks: Memory: needs 2.00 GB, 1.00 GB free'));
    expect(dialog()?.querySelector('.form-error')?.textContent).toBe('The box does not have room for it');
    refuse = false;
    await click(button(dialog()!, 'Restore')!);
    await waitFor(() => expect(el.querySelector('[data-testid=where]')?.textContent).toBe('/app/details?id=inst-2'));
    expect(dialog()).toBeNull();
    expect(calls.filter((c) => c.url.endsWith('/restore')).map((c) => c.body)).toEqual([{ device_id: 'BOX2' }, { device_id: 'BOX2' }]);
    // A refusal moved nothing: the corrected retry of the same choice carries the same key.
    const keys = calls.filter((c) => c.url.endsWith('/restore')).map((c) => c.key);
    expect(keys[0]).toMatch(/^restore-/);
    expect(keys[1]).toBe(keys[0]);
  });

  it('saves the daily backup, the number checked before it is sent (zh)', async () => {
    const calls = serve({
      'GET /api/rmp/v1/apps/inst-1/snapshots': () => list([], { enabled: false, keep: 7 }),
      'PUT /api/rmp/v1/apps/inst-1/backups': (body) => envelope(body),
    });
    const el = await show(<SnapshotsSection inst={inst} onChanged={() => {}} />, 'zh');
    await waitFor(() => expect(el.querySelector('[data-testid=backups-form]')).toBeTruthy());
    expect(el.querySelector('h2')?.textContent).toBe('快照');
    expect(el.querySelector('[data-testid=snapshots-empty]')?.textContent).toBe('还没有快照。');
    expect(button(el, '创建快照')).toBeTruthy();
    const form = el.querySelector<HTMLElement>('[data-testid=backups-form]')!;
    expect(form.querySelector('h3')?.textContent).toBe('每日备份');
    const keep = form.querySelector<HTMLInputElement>('input[type=number]')!;
    expect(keep.value).toBe('7');
    await click(form.querySelector('input[type=checkbox]')!);
    for (const bad of ['0', '31', '2.5', '']) {
      await type(keep, bad);
      await click(form.querySelector('button[type=submit]')!);
      expect(form.querySelector('.field-error')?.textContent).toBe('请输入 1 到 30 之间的整数');
    }
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(0);
    await type(keep, '3');
    await click(form.querySelector('button[type=submit]')!);
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ enabled: true, keep: 3 }]));
    expect(form.querySelector('.field-error')).toBeNull();
  });

  it('says when no snapshot can be taken, and is not shown to another reader', async () => {
    serve({ 'GET /api/rmp/v1/apps/inst-1/snapshots': () => list([]) });
    const el = await show(<SnapshotsSection inst={{ ...inst, actions: ['start'] }} onChanged={() => {}} />);
    await waitFor(() => expect(el.querySelector('[data-testid=snapshot-unavailable]')).toBeTruthy());
    expect(button(el, 'Take a snapshot')).toBeUndefined();
    serve({ 'GET /api/rmp/v1/apps/inst-1/snapshots': () => envelope(null, 404, 'Not found') });
    const other = await show(<SnapshotsSection inst={inst} onChanged={() => {}} />);
    await settle(20);
    expect(other.querySelector('.snapshots-section')).toBeNull();
  });
});

describe('Kept data', () => {
  it('keeps the snapshots whose installation is gone', () => {
    const all = [
      snap({ id: 'A', installation_id: 'live' }),
      snap({ id: 'B', installation_id: 'gone', installation_present: false }),
      snap({ id: 'C', installation_id: 'rented', kind: 'ended', expires_at: '2026-12-05T10:00:00Z', installation_present: false }),
    ];
    expect(keptSnapshots(all).map((s) => s.id)).toEqual(['B', 'C']);
  });

  it('lists them with the app, its box and when it is removed; nothing when there is none (zh)', async () => {
    serve({
      'GET /api/rmp/v1/snapshots': () =>
        envelope({
          items: [snap({ id: 'C', installation_id: 'rented', installation_present: false, kind: 'ended', expires_at: '2026-12-05T10:00:00Z', where: 'box' }), snap({ id: 'A', installation_id: 'live' })],
          total: 2,
        }),
    });
    const el = await show(<KeptData listed="live:running" />, 'zh');
    await waitFor(() => expect(el.querySelector('h2')?.textContent).toBe('保留的数据'));
    expect(el.querySelectorAll('.snapshot-row')).toHaveLength(1);
    const kept = row(el, 'C');
    expect(kept.querySelector('.snapshot-app')?.textContent).toBe('Grafana');
    expect(kept.querySelector('[data-testid=snapshot-kind]')?.textContent).toBe('租用结束后保留');
    expect(kept.querySelector('[data-testid=snapshot-expires]')?.textContent).toBe('将于 2026-12-05 删除');
    expect(button(kept, '恢复')).toBeTruthy();
    expect(button(kept, '保存到市场')).toBeTruthy();
    expect(button(kept, '删除')).toBeTruthy();

    serve({ 'GET /api/rmp/v1/snapshots': () => envelope({ items: [snap({ id: 'A', installation_id: 'live' })], total: 1 }) });
    const none = await show(<KeptData listed={undefined} />);
    await settle(20);
    expect(none.textContent).toBe('');
  });
});
