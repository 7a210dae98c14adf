// Adding a friend by email, and the pending requests: incoming (accept, decline) and outgoing (cancel).
import { useState } from 'react';
import { answerFriendRequest, cancelFriendRequest, sendFriendRequest } from '../../api/social';
import type { FriendRequest, ListPage } from '../../api/types';
import { Field } from '../../components/fields';
import { FormCard, useForm } from '../../components/form';
import { AsyncItems, Section } from '../../components/sections';
import { formatDateTime } from '../../lib/format';
import { useT } from '../../lib/i18n';
import type { AsyncState } from '../../lib/useAsync';
import { validateEmail } from '../../lib/validation';
import { toast, toastFailure, withLoading } from '../../stores/feedback';
import { PersonCell } from './people';

export function AddFriend({ onSent }: { onSent: () => void }) {
  const t = useT();
  const [email, setEmail] = useState('');
  const form = useForm<'email'>({
    validate: () => ({ email: validateEmail(email) }),
    action: async () => {
      await withLoading(() => sendFriendRequest(email.trim()));
      // The same answer whether or not the address has an account (no enumeration).
      toast('success', t('friend_request_sent'));
      setEmail('');
      onSent();
    },
    serverErrorField: 'email',
  });
  return (
    <FormCard id="add-friend-title" title={t('add_friend')} submitLabel={t('send_request')} form={form}>
      <Field
        label={t('email')}
        type="email"
        autoComplete="off"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        error={form.error('email')}
        hint={t('add_friend_hint')}
      />
    </FormCard>
  );
}

export function FriendRequests({ state, onAnswered }: { state: AsyncState<ListPage<FriendRequest>>; onAnswered: () => void }) {
  const t = useT();
  const act = (work: () => Promise<unknown>, done: string) =>
    toastFailure(async () => {
      await withLoading(work);
      toast('success', done);
      onAnswered();
    });
  return (
    <Section className="card" id="requests-title" title={t('friend_requests')}>
      <AsyncItems state={state} emptyIcon="friends" emptyTitle={t('no_friend_requests')}>
        {(items) => (
          <ul className="company-list">
            {items.map((r) => (
              <li key={r.id} className="list-row" data-request={r.id}>
                {r.direction === 'incoming' ? (
                  <>
                    <span className="request-who">
                      <PersonCell person={r.from} />
                      <span className="muted small-text">
                        {t('wants_to_be_friends')} · <time dateTime={r.created_at}>{formatDateTime(r.created_at)}</time>
                      </span>
                    </span>
                    <span className="row-actions">
                      <button type="button" className="button primary small" onClick={() => void act(() => answerFriendRequest(r.id, 'accept'), t('friend_added'))}>
                        {t('accept')}
                      </button>
                      <button type="button" className="button ghost small" onClick={() => void act(() => answerFriendRequest(r.id, 'decline'), t('request_declined'))}>
                        {t('decline')}
                      </button>
                    </span>
                  </>
                ) : (
                  <>
                    <span className="request-who">
                      <strong>{r.to.email}</strong>
                      <span className="muted small-text">
                        {t('request_waiting')} · <time dateTime={r.created_at}>{formatDateTime(r.created_at)}</time>
                      </span>
                    </span>
                    <span className="row-actions">
                      <button type="button" className="button ghost small" onClick={() => void act(() => cancelFriendRequest(r.id), t('request_cancelled'))}>
                        {t('cancel_request')}
                      </button>
                    </span>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </AsyncItems>
    </Section>
  );
}
