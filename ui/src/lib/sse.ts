// A text/event-stream reader (the WHATWG "event stream interpretation" rules), for streams read
// with fetch: EventSource cannot send the Authorization header, and the token must not go into a URL.

export interface SseEvent {
  /** The event type (`message` when the stream names none). */
  event: string;
  data: string;
  /** The last event id after this event (ids persist until the stream sets another). */
  lastEventId: string;
}

interface SseParser {
  /** Feeds the next decoded chunk; whole events go to the callback as they complete. */
  push(chunk: string): void;
  /** The retry delay the stream asked for, if any. */
  readonly retry: number | null;
  readonly lastEventId: string;
}

export function createSseParser(onEvent: (e: SseEvent) => void, lastEventId = ''): SseParser {
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id = lastEventId;
  let retry: number | null = null;

  const dispatch = () => {
    if (data.length) onEvent({ event: event || 'message', data: data.join('\n'), lastEventId: id });
    data = [];
    event = '';
  };

  const line = (l: string) => {
    if (l === '') return dispatch();
    if (l.startsWith(':')) return; // a comment (the server's keep-alive)
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
  };

  return {
    push(chunk: string) {
      buffer += chunk;
      // A lone \r at the end may be the first half of \r\n: keep it for the next chunk.
      const parts = buffer.split(/\r\n|\n|\r(?!$)/);
      buffer = parts.pop() ?? '';
      for (const l of parts) line(l);
    },
    get retry() {
      return retry;
    },
    get lastEventId() {
      return id;
    },
  };
}

/**
 * Reads a response body as text into `onChunk` until it ends, `onChunk` returns false (then the
 * body is cancelled), or the read fails (the error propagates: a broken connection).
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, onChunk: (text: string) => boolean | void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        const rest = decoder.decode();
        if (rest) onChunk(rest);
        return;
      }
      if (onChunk(decoder.decode(value, { stream: true })) === false) {
        await reader.cancel().catch(() => undefined);
        return;
      }
    }
  } finally {
    reader.releaseLock?.();
  }
}
