// /messages: the conversations (last message, unread count) beside the open one, and the tab of
// the person's notifications (`?tab=notifications`, where the bell's "View all" lands).
import { useCallback } from 'react';
import { Link, useSearchParams } from 'react-router';
import { fetchFriend, fetchFriends, fetchConversations } from '../../api/social';
import { refreshSocialCounts } from '../../api/events';
import type { Conversation, Peer } from '../../api/types';
import { Avatar } from '../../components/Avatar';
import { Badge } from '../../components/Badge';
import { EmptyState } from '../../components/placeholders';
import { AsyncItems, PageHeader } from '../../components/sections';
import { formatDateTime } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';
import { useLiveEvent } from '../../stores/live';
import { useNotifications } from '../../stores/notifications';
import { NotificationsList } from './NotificationsList';
import { displayName } from './people';
import { Thread } from './Thread';

/** Friends offered when there is no conversation yet. */
const FRIENDS_SHOWN = 50;

type ListedConversation = Pick<Conversation, 'peer' | 'unread' | 'last_message'>;

function ConversationList({ items, current }: { items: ListedConversation[]; current: string | null }) {
  const t = useT();
  return (
    <ul className="conversation-list">
      {items.map((c) => {
        const name = displayName(c.peer);
        const last = c.last_message;
        const mine = last ? last.from !== c.peer.user_id : false;
        return (
          <li key={c.peer.user_id}>
            <Link
              to={paths.console.messages({ with: c.peer.user_id })}
              className={c.peer.user_id === current ? 'conversation active' : 'conversation'}
              aria-current={c.peer.user_id === current ? 'page' : undefined}
              data-peer={c.peer.user_id}
            >
              <Avatar name={name} url={c.peer.avatar_url} />
              <span className="conversation-text">
                <span className="conversation-top">
                  <strong>{name}</strong>
                  {last ? <time dateTime={last.created_at}>{formatDateTime(last.created_at)}</time> : null}
                </span>
                <span className="conversation-last muted">{last ? `${mine ? `${t('you_prefix')} ` : ''}${last.body}` : t('no_messages_yet')}</span>
              </span>
              <Badge count={c.unread} label={t('unread')} />
            </Link>
          </li>
        );
      })}
    </ul>
  );
}

/** No conversation yet: the friends, each opening a new conversation here (issue 26: not a link back). */
function FriendsToMessage({ current }: { current: string | null }) {
  const t = useT();
  const friends = useAsync(() => fetchFriends(null, 0, FRIENDS_SHOWN), []);
  const items = friends.data?.items;
  if (!items) return null;
  if (!items.length) {
    return (
      <p className="muted small-text">
        <Link to={paths.console.friends()}>{t('add_friend_to_message')}</Link>
      </p>
    );
  }
  return (
    <>
      <h3 className="muted small-text start-with">{t('message_a_friend')}</h3>
      <ConversationList items={items.map((f) => ({ peer: { user_id: f.user_id, name: f.name, alias: f.alias, avatar_url: f.avatar_url }, unread: 0, last_message: null }))} current={current} />
    </>
  );
}

/** The open conversation's peer: from the list, or (a friend not written to yet) from the friends. */
function useOpenPeer(peerId: string | null, list: Conversation[] | undefined) {
  const inList = list?.find((c) => c.peer.user_id === peerId)?.peer;
  const friend = useAsync<Peer | null>(
    peerId && list && !inList ? () => fetchFriend(peerId).then((f) => ({ user_id: f.user_id, name: f.name, alias: f.alias, avatar_url: f.avatar_url })) : null,
    [peerId, Boolean(list), Boolean(inList)],
  );
  return { peer: inList ?? friend.data ?? null, missing: Boolean(peerId && list && !inList && friend.error) };
}

function Conversations({ peerId }: { peerId: string | null }) {
  const t = useT();
  const state = useAsync(() => fetchConversations(), []);
  useLiveEvent((e) => {
    if (e.kind !== 'notification') state.refresh();
  });
  const { peer, missing } = useOpenPeer(peerId, state.data?.items);
  const refresh = state.refresh;
  const onRead = useCallback(() => {
    refresh();
    void refreshSocialCounts();
  }, [refresh]);
  return (
    <div className="messages-layout">
      <section className="card conversations" aria-labelledby="conversations-title">
        <h2 id="conversations-title">{t('conversations')}</h2>
        <AsyncItems state={state} emptyIcon="messages" emptyTitle={t('no_conversations')}>
          {(items) => <ConversationList items={items} current={peerId} />}
        </AsyncItems>
        {!state.loading && state.data && !state.data.items.length ? <FriendsToMessage current={peerId} /> : null}
      </section>
      {peer ? (
        <Thread key={peer.user_id} peer={peer} onRead={onRead} />
      ) : (
        <section className="thread card thread-empty">
          <EmptyState icon="messages" title={missing ? t('conversation_not_found') : t('pick_conversation')} />
        </section>
      )}
    </div>
  );
}

export default function MessagesPage() {
  const t = useT();
  const [params] = useSearchParams();
  const tab = params.get('tab') === 'notifications' ? 'notifications' : 'messages';
  const peerId = params.get('with');
  const unreadNotifications = useNotifications((s) => s.stats?.unread ?? 0);
  return (
    <div className="page stack">
      <PageHeader title={t('messages')} />
      <nav className="category-tabs" aria-label={t('messages')}>
        <Link className={tab === 'messages' ? 'tab active' : 'tab'} aria-current={tab === 'messages' ? 'page' : undefined} to={paths.console.messages()}>
          {t('conversations')}
        </Link>
        <Link
          className={tab === 'notifications' ? 'tab active' : 'tab'}
          aria-current={tab === 'notifications' ? 'page' : undefined}
          to={paths.console.messages({ tab: 'notifications' })}
        >
          {t('notifications')} <Badge count={unreadNotifications} label={t('unread')} />
        </Link>
      </nav>
      {tab === 'notifications' ? <NotificationsList /> : <Conversations peerId={peerId} />}
    </div>
  );
}
