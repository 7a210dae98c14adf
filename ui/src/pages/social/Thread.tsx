// One conversation: its history paged backwards ("Earlier messages"), new messages as they arrive
// (live, or by the poll while the stream is unavailable), the composer, and marking read while the
// reader has it open and in view.
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { fetchHistory, markConversationRead, sendMessage } from '../../api/social';
import type { Message, Peer } from '../../api/types';
import { MESSAGE_MAX_LENGTH, MESSAGE_PAGE_SIZE } from '../../constants';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Avatar } from '../../components/Avatar';
import { MoreButton } from '../../components/LoadMore';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { formatDateTime } from '../../lib/format';
import { errorText } from '../../lib/http';
import { useT } from '../../lib/i18n';
import { validateMessage } from '../../lib/validation';
import { useLiveEvent } from '../../stores/live';
import { displayName } from './people';

/** Oldest first, each id once (message ids are UUID v7: their order is the history's). */
function merge(a: Message[], b: Message[]): Message[] {
  const byId = new Map<string, Message>();
  for (const m of [...a, ...b]) byId.set(m.id, m);
  return [...byId.values()].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

interface History {
  items: Message[];
  /** The conversation's size: earlier messages exist while fewer are loaded. */
  total: number;
}

const visible = () => typeof document === 'undefined' || document.visibilityState === 'visible';

function useHistory(peerId: string, onRead: () => void) {
  const [history, setHistory] = useState<History | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState(visible);

  /** Marks what the peer sent as read, here at once and then on the server. */
  const readTheirs = useCallback(
    () => setHistory((h) => h && { ...h, items: h.items.map((m) => (m.from === peerId && !m.read ? { ...m, read: true } : m)) }),
    [peerId],
  );

  // While the conversation is open and in view, what the peer sent is read.
  const unread = Boolean(history?.items.some((m) => m.from === peerId && !m.read));
  useEffect(() => {
    if (!unread || !shown) return;
    readTheirs();
    markConversationRead(peerId)
      .then(onRead)
      .catch(() => undefined);
  }, [unread, shown, peerId, readTheirs, onRead]);

  useEffect(() => {
    const onVisibility = () => setShown(visible());
    document.addEventListener('visibilitychange', onVisibility);
    return () => document.removeEventListener('visibilitychange', onVisibility);
  }, []);

  /** The newest page, merged into what is loaded (on opening, and after anything may have been missed). */
  const loadNewest = useCallback(
    (signal?: AbortSignal) =>
      fetchHistory(peerId, null, MESSAGE_PAGE_SIZE, signal).then((page) => {
        setError(null);
        setHistory((h) => {
          const items = merge(h?.items ?? [], page.items);
          return { items, total: Math.max(page.total, items.length) };
        });
      }),
    [peerId],
  );

  useEffect(() => {
    const controller = new AbortController();
    setHistory(null);
    setError(null);
    loadNewest(controller.signal).catch((err) => {
      if (!controller.signal.aborted) setError(errorText(err));
    });
    return () => controller.abort();
  }, [loadNewest]);

  const loadEarlier = async () => {
    const oldest = history?.items[0];
    if (!oldest) return;
    const page = await fetchHistory(peerId, oldest.id, MESSAGE_PAGE_SIZE);
    setHistory((h) => ({ items: merge(page.items, h?.items ?? []), total: page.total }));
  };

  const add = (m: Message) =>
    setHistory((h) => {
      if (!h) return h;
      const known = h.items.some((x) => x.id === m.id);
      return { items: merge(h.items, [m]), total: known ? h.total : h.total + 1 };
    });

  useLiveEvent((e) => {
    if (e.kind === 'message') {
      const m = e.data as Message;
      if (m.from === peerId || m.to === peerId) add(m);
    } else if (e.kind === 'read') {
      const r = e.data as { reader_id: string; peer_id: string };
      if (r.reader_id === peerId) {
        // The peer read what the reader sent them.
        setHistory((h) => h && { ...h, items: h.items.map((m) => (m.to === peerId ? { ...m, read: true } : m)) });
      } else if (r.peer_id === peerId) {
        readTheirs(); // read in the reader's other tab
      }
    } else if (e.kind === 'reload') {
      loadNewest().catch(() => undefined);
    }
  });

  return { history, error, loadEarlier, add, retry: () => void loadNewest().catch((err) => setError(errorText(err))) };
}

function Composer({ peerId, onSent }: { peerId: string; onSent: (m: Message) => void }) {
  const t = useT();
  const [body, setBody] = useState('');
  const form = useForm<'body'>({
    validate: () => ({ body: validateMessage(body) }),
    action: async () => {
      const m = await sendMessage(peerId, body);
      setBody('');
      onSent(m);
    },
    serverErrorField: 'body',
  });
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) form.submit(e);
  };
  const error = form.error('body');
  return (
    <form className="composer" onSubmit={form.submit} noValidate>
      <label htmlFor="message-body" className="visually-hidden">
        {t('message_label')}
      </label>
      <textarea
        id="message-body"
        rows={2}
        value={body}
        maxLength={MESSAGE_MAX_LENGTH}
        placeholder={t('message_placeholder')}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'message-body-error' : undefined}
        onChange={(e) => setBody(e.target.value)}
        onKeyDown={onKey}
      />
      <SubmitButton form={form}>{t('send')}</SubmitButton>
      {error ? (
        <p className="field-error" id="message-body-error" role="alert">
          {error}
        </p>
      ) : null}
      <FormError form={form} />
    </form>
  );
}

export function Thread({ peer, onRead }: { peer: Peer; onRead: () => void }) {
  const t = useT();
  const { history, error, loadEarlier, add, retry } = useHistory(peer.user_id, onRead);
  const list = useRef<HTMLOListElement>(null);
  const lastId = useRef<string | null>(null);
  const firstId = useRef<string | null>(null);
  const heightBefore = useRef(0);

  // New messages at the end scroll into view; earlier ones loaded at the top keep the place.
  useLayoutEffect(() => {
    const el = list.current;
    const items = history?.items ?? [];
    if (!el || !items.length) return;
    const first = items[0].id;
    const last = items[items.length - 1].id;
    if (firstId.current && first !== firstId.current && last === lastId.current) el.scrollTop += el.scrollHeight - heightBefore.current;
    else if (last !== lastId.current) el.scrollTop = el.scrollHeight;
    firstId.current = first;
    lastId.current = last;
    heightBefore.current = el.scrollHeight;
  }, [history]);

  const name = displayName(peer);
  return (
    <section className="thread card" aria-labelledby="thread-title">
      <header className="thread-header">
        <Avatar name={name} url={peer.avatar_url} />
        <h2 id="thread-title">{name}</h2>
      </header>
      {error ? <ErrorNote text={error} onRetry={retry} /> : null}
      {!history ? (
        error ? null : <SkeletonLines lines={4} />
      ) : (
        <>
          <MoreButton shown={history.items.length} total={history.total} load={loadEarlier} label={t('earlier_messages')} above className="button ghost small" />
          {history.items.length === 0 ? (
            <EmptyState icon="messages" title={t('no_messages_yet')} text={t('say_hello', { name })} />
          ) : (
            <ol className="message-list" ref={list} role="log" aria-live="polite" aria-label={t('conversation_with', { name })}>
              {history.items.map((m) => {
                const mine = m.from !== peer.user_id;
                return (
                  <li key={m.id} className={mine ? 'bubble mine' : 'bubble theirs'} data-message={m.id}>
                    <p>{m.body}</p>
                    <span className="bubble-meta">
                      <time dateTime={m.created_at}>{formatDateTime(m.created_at)}</time>
                      {mine ? <span>{m.read ? t('read_receipt') : t('sent_receipt')}</span> : null}
                    </span>
                  </li>
                );
              })}
            </ol>
          )}
        </>
      )}
      <Composer peerId={peer.user_id} onSent={add} />
    </section>
  );
}
