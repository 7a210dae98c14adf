import { describe, expect, it } from 'vitest';
import { createSseParser, type SseEvent } from '../src/lib/sse';

function parse(chunks: string[], lastEventId = '') {
  const events: SseEvent[] = [];
  const parser = createSseParser((e) => events.push(e), lastEventId);
  for (const c of chunks) parser.push(c);
  return { events, parser };
}

describe('the event-stream reader', () => {
  it('reads events, ids and the retry of the server', () => {
    const { events, parser } = parse(['retry: 3000\nid: 7\nevent: ready\ndata: {"last":7,"resumed":false}\n\n', 'id: 8\nevent: message\ndata: {"id":"m"}\n\n']);
    expect(events).toEqual([
      { event: 'ready', data: '{"last":7,"resumed":false}', lastEventId: '7' },
      { event: 'message', data: '{"id":"m"}', lastEventId: '8' },
    ]);
    expect(parser.retry).toBe(3000);
    expect(parser.lastEventId).toBe('8');
  });

  it('joins events split anywhere across chunks, CRLF included', () => {
    const text = 'id: 3\r\nevent: read\r\ndata: {"a":\r\ndata: 1}\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      const { events } = parse([text.slice(0, cut), text.slice(cut)]);
      expect(events, `cut at ${cut}`).toEqual([{ event: 'read', data: '{"a":\n1}', lastEventId: '3' }]);
    }
  });

  it('ignores comments (keep-alive), keeps the id an event without one had, names unnamed events "message"', () => {
    const { events, parser } = parse([': keep-alive\n\nevent: ready\ndata: {"resumed":true}\n\n', 'data: x\n\n'], '41');
    expect(events.map((e) => [e.event, e.lastEventId])).toEqual([
      ['ready', '41'],
      ['message', '41'],
    ]);
    expect(parser.lastEventId).toBe('41');
  });

  it('dispatches nothing for an unfinished event', () => {
    expect(parse(['event: message\ndata: half']).events).toEqual([]);
  });
});
