// @vitest-environment happy-dom
// The log panel: the followed stream's `line` and `end` events, the search filter with its
// highlights, the 5,000-line cap, the overlap after a reconnect, the downloaded file, and the logs
// of an app that printed nothing.
import { describe, expect, it, vi } from 'vitest';
import { followAppLogs, logStreamEvent, type LogLine } from '../src/api/connect';
import { LogPanel } from '../src/pages/apps/connect/LogPanel';
import { LOG_MAX_LINES, appendCapped, dropOverlap, filterLines, logFileName, logFileText, splitMatches } from '../src/pages/apps/connect/logs';
import { createSseParser, type SseEvent } from '../src/lib/sse';
import { click, envelope, eventStream, show, signedInEachTest, sseLine, type, waitFor } from './connect-render';

const line = (i: number, text = `line ${i}`, stream: 'stdout' | 'stderr' = 'stdout'): LogLine => ({
  ts: `2025-01-02T03:04:${String(i % 60).padStart(2, '0')}.${String(i).padStart(9, '0')}Z`,
  stream,
  text,
});

signedInEachTest();

describe('the followed logs stream', () => {
  it('reads line and end events, whatever the chunking', () => {
    const text = sseLine('2025-01-02T03:04:05.000000001Z', 'stderr', 'boom: "x"\tdone') + ': keep-alive\n\n' + 'event: end\ndata: {"reason":"The container stopped."}\n\n';
    for (let cut = 1; cut < text.length; cut += 7) {
      const got: ReturnType<typeof logStreamEvent>[] = [];
      const parser = createSseParser((e: SseEvent) => got.push(logStreamEvent(e)));
      parser.push(text.slice(0, cut));
      parser.push(text.slice(cut));
      expect(got, `cut at ${cut}`).toEqual([
        { line: { ts: '2025-01-02T03:04:05.000000001Z', stream: 'stderr', text: 'boom: "x"\tdone' } },
        { end: { reason: 'The container stopped.' } },
      ]);
    }
  });

  it('skips what it cannot read; an unknown stream counts as stdout', () => {
    const ev = (event: string, data: string) => logStreamEvent({ event, data, lastEventId: '' });
    expect(ev('line', 'not json')).toBeNull();
    expect(ev('line', '{"ts":"t"}')).toBeNull();
    expect(ev('other', '{"text":"x"}')).toBeNull();
    expect(ev('line', '{"ts":1700000000000,"stream":"weird","text":"x"}')).toEqual({ line: { ts: 1700000000000, stream: 'stdout', text: 'x' } });
    expect(ev('end', '{}')).toEqual({ end: { reason: null } });
  });

  it('sends the token and asks for events; resolves with the end reason', async () => {
    const fetchMock = vi.fn((_u: RequestInfo | URL, _i?: RequestInit) =>
      Promise.resolve(eventStream([sseLine('a', 'stdout', 'one') + 'event: line\ndata: {"ts":"b","stream":"stdout","text":"tw', 'o"}\n', '\nevent: end\ndata: {"reason":"exited"}\n\n'])),
    );
    vi.stubGlobal('fetch', fetchMock);
    const got: LogLine[] = [];
    const end = await followAppLogs('x1', 200, (ls) => got.push(...ls), new AbortController().signal);
    expect(end).toEqual({ reason: 'exited' });
    expect(got.map((l) => l.text)).toEqual(['one', 'two']);
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/rmp/v1/apps/x1/logs?tail=200&follow=1');
    const h = init!.headers as Record<string, string>;
    expect([h.Authorization, h.Accept]).toEqual(['Bearer ACCESS', 'text/event-stream']);
  });

  it('a stream cut without an end resolves with no reason; a refusal rejects with the server message', async () => {
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(eventStream([sseLine('a', 'stdout', 'one')]))));
    await expect(followAppLogs('x1', 200, () => {}, new AbortController().signal)).resolves.toEqual({ reason: null });
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(envelope(null, 409, 'The device is offline'))));
    await expect(followAppLogs('x1', 200, () => {}, new AbortController().signal)).rejects.toMatchObject({ message: 'The device is offline', code: 409 });
  });
});

describe('log bookkeeping', () => {
  it('keeps only the newest 5,000 lines', () => {
    expect(LOG_MAX_LINES).toBe(5000);
    let lines = appendCapped([], [], 0);
    let n = 0;
    for (let chunk = 0; chunk < 12; chunk++) {
      const incoming = Array.from({ length: 500 }, (_, i) => line(n + i));
      lines = appendCapped(lines, incoming, n);
      n += incoming.length;
    }
    expect(lines).toHaveLength(5000);
    expect(lines[0].n).toBe(1000);
    expect(lines[0].text).toBe('line 1000');
    expect(lines[4999].text).toBe('line 5999');
    // One burst larger than the cap keeps its newest lines.
    const big = appendCapped(lines, Array.from({ length: 6000 }, (_, i) => line(i, `b${i}`)), n);
    expect(big).toHaveLength(5000);
    expect([big[0].text, big[4999].text]).toEqual(['b1000', 'b5999']);
  });

  it('filters case-insensitively and marks every match', () => {
    const lines = [line(1, 'GET /index.html 200'), line(2, 'error: disk full'), line(3, 'Error again, ERROR')];
    expect(filterLines(lines, 'error').map((l) => l.text)).toEqual(['error: disk full', 'Error again, ERROR']);
    expect(filterLines(lines, '  ')).toBe(lines);
    expect(splitMatches('Error again, ERROR', 'error')).toEqual([
      { text: 'Error', match: true },
      { text: ' again, ', match: false },
      { text: 'ERROR', match: true },
    ]);
    expect(splitMatches('abc', '')).toEqual([{ text: 'abc', match: false }]);
  });

  it('drops the overlap of a reconnect (lines up to the last shown time stamp)', () => {
    const tail = [line(1), line(2), line(3), line(4)];
    expect(dropOverlap(tail, line(2).ts)).toEqual({ lines: [line(3), line(4)], caughtUp: true });
    expect(dropOverlap(tail, line(4).ts)).toEqual({ lines: [], caughtUp: false });
    expect(dropOverlap(tail, null)).toEqual({ lines: tail, caughtUp: true });
  });

  it('writes the .log file: local time, stream, text, one a line', () => {
    const ts = new Date(2025, 0, 2, 3, 4, 5, 6).getTime();
    expect(logFileText([{ ts, stream: 'stderr', text: 'boom' }, { ts, stream: 'stdout', text: 'ok' }])).toBe(
      '2025-01-02 03:04:05.006 stderr boom\n2025-01-02 03:04:05.006 stdout ok\n',
    );
    expect(logFileName('My App / v2', new Date(2025, 0, 2, 3, 4, 5))).toBe('My-App-v2-20250102-030405.log');
  });
});

describe('the log panel', () => {
  const rows = (el: HTMLElement) => [...el.querySelectorAll('.log-line')] as HTMLElement[];

  it('shows the lines with stderr marked, filters with highlights, and offers Reconnect when the stream ends', async () => {
    const stream = [sseLine('2025-01-02T03:04:05Z', 'stdout', 'listening on :80'), sseLine('2025-01-02T03:04:06Z', 'stderr', 'warning: Low disk'), sseLine('2025-01-02T03:04:07Z', 'stdout', 'GET / 200')];
    const fetchMock = vi.fn(() => Promise.resolve(eventStream([...stream, 'event: end\ndata: {"reason":"The container stopped."}\n\n'])));
    vi.stubGlobal('fetch', fetchMock);
    const el = await show(<LogPanel id="x1" name="Grafana" />);
    await waitFor(() => expect(rows(el)).toHaveLength(3));
    expect(rows(el)[1].classList.contains('stderr')).toBe(true);
    expect(rows(el)[1].querySelector('.log-stream')!.textContent).toBe('stderr');
    expect(rows(el)[0].querySelector('.log-stream')).toBeNull();
    expect(rows(el)[0].querySelector('time')!.textContent).toMatch(/^\d\d:\d\d:05$/);
    await waitFor(() => expect(el.querySelector('[data-testid="log-end"]')!.textContent).toContain('The container stopped.'));

    await type(el.querySelector('input[type="search"]') as HTMLInputElement, 'DISK');
    expect(rows(el).map((r) => r.querySelector('.log-text')!.textContent)).toEqual(['warning: Low disk']);
    expect([...el.querySelectorAll('mark')].map((m) => m.textContent)).toEqual(['disk']);
    expect(el.querySelector('[data-testid="log-count"]')!.textContent).toBe('1 of 3 lines');
    await type(el.querySelector('input[type="search"]') as HTMLInputElement, 'nothing like it');
    expect(rows(el)).toHaveLength(0);
    expect(el.textContent).toContain('No loaded line matches.');
    await type(el.querySelector('input[type="search"]') as HTMLInputElement, '');

    // Reconnect: the stream starts again with its tail; what is already shown is not repeated.
    fetchMock.mockImplementation(() => Promise.resolve(eventStream([...stream, sseLine('2025-01-02T03:04:08Z', 'stdout', 'GET /again 200')], true)));
    await click([...el.querySelectorAll('button')].find((b) => b.textContent === 'Reconnect')!);
    await waitFor(() => expect(rows(el)).toHaveLength(4));
    expect(rows(el)[3].textContent).toContain('GET /again 200');
    expect(el.querySelector('[data-testid="log-end"]')).toBeNull();
  });

  it('keeps at most 5,000 lines of a long stream', async () => {
    const chunks: string[] = [];
    for (let c = 0; c < 11; c++) chunks.push(Array.from({ length: 500 }, (_, i) => sseLine(line(c * 500 + i).ts as string, 'stdout', `line ${c * 500 + i}`)).join(''));
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(eventStream(chunks, true))));
    const el = await show(<LogPanel id="x1" name="Grafana" />);
    await waitFor(() => expect(el.querySelector('[data-testid="log-count"]')!.textContent).toContain('5000 of 5000 lines'), 10_000);
    const all = rows(el);
    expect(all).toHaveLength(5000);
    expect(all[0].textContent).toContain('line 500');
    expect(all[4999].textContent).toContain('line 5499');
    expect(el.textContent).toContain('Only the newest 5000 lines are kept.');
  }, 20_000);

  it('without Follow, loads the tail once as JSON', async () => {
    const fetchMock = vi.fn((input: RequestInfo | URL) =>
      String(input).includes('follow=1')
        ? Promise.resolve(eventStream([sseLine('2025-01-02T03:04:05Z', 'stdout', 'streamed')], true))
        : Promise.resolve(envelope({ lines: [] })),
    );
    vi.stubGlobal('fetch', fetchMock);
    const el = await show(<LogPanel id="x1" name="Grafana" />);
    await waitFor(() => expect(rows(el)).toHaveLength(1));
    await click(el.querySelector('.log-follow input')!);
    expect(el.textContent).toContain('Not following');
    // What was loaded stays; no new request for it.
    expect(rows(el)).toHaveLength(1);
    expect(fetchMock.mock.calls.every(([u]) => String(u).includes('follow=1'))).toBe(true);
  });
});

/** Followed log streams that stay open (one per request: StrictMode asks twice), and a way to
 * send the latest more. */
function openStreams() {
  const enc = new TextEncoder();
  let send: (text: string) => void = () => {};
  const respond = () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        send = (text) => controller.enqueue(enc.encode(text));
      },
    });
    return Promise.resolve(new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }));
  };
  return { respond, send: (text: string) => send(text) };
}

describe('the logs of an app that printed nothing', () => {
  for (const [lang, empty] of [
    ['en', 'No output yet: what the app prints appears here.'],
    ['zh', '暂无输出：应用输出的内容会显示在这里。'],
  ] as const) {
    it(`say so, count nothing, and keep following (${lang})`, async () => {
      const stream = openStreams();
      vi.stubGlobal('fetch', vi.fn(stream.respond));
      const el = await show(<LogPanel id="x1" name="Grafana" />, lang);
      await waitFor(() => expect(el.querySelector('.log-note')?.textContent).toBe(empty));
      expect(el.querySelector('[role="log"]')!.getAttribute('data-phase')).toBe('following');
      expect(el.querySelector('[data-testid="log-count"]')).toBeNull();
      expect(el.querySelector('[data-testid="log-end"]')).toBeNull();
      // The app prints a line later: it shows, on the same stream.
      stream.send(sseLine('2025-01-02T03:04:05Z', 'stdout', 'first words'));
      await waitFor(() => expect(el.querySelectorAll('.log-line')).toHaveLength(1));
      expect(el.querySelector('.log-note')).toBeNull();
      expect(el.querySelector('[data-testid="log-count"]')).not.toBeNull();
    });
  }
});
