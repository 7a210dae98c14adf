// /friends: add a friend by email, the pending requests, the friends (filtered by tag) with their
// alias and tags, and the people blocked. Live: requests and friendships change without reload.
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { blockPerson, fetchBlocked, fetchFriendRequests, fetchFriends, fetchTags, removeFriend, unblockPerson } from '../../api/social';
import type { Friend } from '../../api/types';
import { ConfirmDialog, useConfirm } from '../../components/Dialog';
import { ActionTable, AsyncItems, PageHeader, Section } from '../../components/sections';
import { formatDate } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';
import { toast, toastFailure, withLoading } from '../../stores/feedback';
import { useLiveEvent } from '../../stores/live';
import { FriendEditor } from './FriendEditor';
import { AddFriend, FriendRequests } from './FriendRequests';
import { displayName, PersonCell } from './people';

function TagFilter({ tag, tags, onChange }: { tag: string; tags: { name: string; count: number }[]; onChange: (tag: string) => void }) {
  const t = useT();
  return (
    <div className="field inline-field">
      <label htmlFor="friend-tag-filter">{t('filter_by_tag')}</label>
      <select id="friend-tag-filter" value={tag} onChange={(e) => onChange(e.target.value)}>
        <option value="">{t('all_friends')}</option>
        {tags.map((x) => (
          <option key={x.name} value={x.name}>
            {x.name} ({x.count})
          </option>
        ))}
      </select>
    </div>
  );
}

function Blocked({ nonce, onChanged }: { nonce: number; onChanged: () => void }) {
  const t = useT();
  const state = useAsync(() => fetchBlocked(), [nonce]);
  const unblock = (id: string) =>
    toastFailure(async () => {
      await withLoading(() => unblockPerson(id));
      toast('success', t('unblocked'));
      state.refresh();
      onChanged();
    });
  if (!state.loading && !state.error && !state.data?.items.length) return null;
  return (
    <Section className="card" id="blocked-title" title={t('blocked_people')}>
      <AsyncItems state={state} emptyIcon="friends" emptyTitle={t('no_blocked')}>
        {(items) => (
          <ul className="company-list">
            {items.map((p) => (
              <li key={p.user_id} className="list-row">
                <PersonCell person={p} />
                <button type="button" className="button ghost small" onClick={() => void unblock(p.user_id)}>
                  {t('unblock')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </AsyncItems>
    </Section>
  );
}

export default function FriendsPage() {
  const t = useT();
  const [params, setParams] = useSearchParams();
  const tag = params.get('tag') ?? '';
  const friends = useAsync(() => fetchFriends(tag || null), [tag]);
  const tags = useAsync(() => fetchTags(), []);
  const requests = useAsync(() => fetchFriendRequests(), []);
  const [blockedNonce, setBlockedNonce] = useState(0);
  const [editing, setEditing] = useState<Friend | null>(null);

  const refreshFriends = () => {
    friends.refresh();
    tags.refresh();
  };
  useLiveEvent((e) => {
    if (e.kind === 'friend_request') requests.refresh();
    if (e.kind === 'friend') refreshFriends();
    if (e.kind === 'reload') {
      requests.refresh();
      refreshFriends();
    }
  });

  const remove = useConfirm(async (f: Friend) => {
    await withLoading(() => removeFriend(f.user_id));
    toast('success', t('friend_removed'));
    refreshFriends();
  });
  const block = useConfirm(async (f: Friend) => {
    await withLoading(() => blockPerson(f.user_id));
    toast('success', t('blocked_toast'));
    refreshFriends();
    setBlockedNonce((n) => n + 1);
  });

  return (
    <div className="page stack">
      <PageHeader
        title={t('friends')}
        subtitle={t('friends_intro')}
        actions={
          <Link className="button ghost" to={paths.console.tags()}>
            {t('manage_tags')}
          </Link>
        }
      />
      <div className="grid-2">
        <AddFriend onSent={requests.refresh} />
        <FriendRequests state={requests} onAnswered={() => (requests.refresh(), refreshFriends())} />
      </div>
      <Section className="card" id="friends-list-title" title={t('my_friends')}>
        <TagFilter tag={tag} tags={tags.data?.items ?? []} onChange={(v) => setParams(v ? { tag: v } : {})} />
        <AsyncItems state={friends} emptyIcon="friends" emptyTitle={tag ? t('no_friends_tagged', { tag }) : t('no_friends')}>
          {(items) => (
            <ActionTable columns={[t('friend'), t('friend_tags'), t('friends_since')]} actionLabel={t('actions')}>
              {items.map((f) => (
                <tr key={f.user_id} data-friend={f.user_id}>
                  <td>
                    <PersonCell person={f} />
                  </td>
                  <td>
                    <span className="chips">
                      {f.tags.map((name) => (
                        <Link key={name} className="chip" to={paths.console.friends(name)}>
                          {name}
                        </Link>
                      ))}
                    </span>
                  </td>
                  <td>{formatDate(f.since)}</td>
                  <td className="row-actions">
                    <Link className="button primary small" to={paths.console.messages({ with: f.user_id })}>
                      {t('send_message')}
                    </Link>
                    <button type="button" className="button ghost small" aria-label={`${t('edit')} ${displayName(f)}`} onClick={() => setEditing(f)}>
                      {t('edit')}
                    </button>
                    <button type="button" className="button ghost small" aria-label={`${t('remove')} ${displayName(f)}`} onClick={() => remove.ask(f)}>
                      {t('remove')}
                    </button>
                    <button type="button" className="button ghost small" aria-label={`${t('block')} ${displayName(f)}`} onClick={() => block.ask(f)}>
                      {t('block')}
                    </button>
                  </td>
                </tr>
              ))}
            </ActionTable>
          )}
        </AsyncItems>
      </Section>
      <Blocked nonce={blockedNonce} onChanged={requests.refresh} />
      {editing ? (
        <FriendEditor
          friend={editing}
          allTags={(tags.data?.items ?? []).map((x) => x.name)}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            refreshFriends();
          }}
        />
      ) : null}
      <ConfirmDialog
        {...remove.dialog}
        title={t('remove_friend')}
        text={t('confirm_remove_friend', { name: remove.subject ? displayName(remove.subject) : '' })}
        confirmLabel={t('remove')}
      />
      <ConfirmDialog
        {...block.dialog}
        title={t('block')}
        text={t('confirm_block', { name: block.subject ? displayName(block.subject) : '' })}
        confirmLabel={t('block')}
      />
    </div>
  );
}
