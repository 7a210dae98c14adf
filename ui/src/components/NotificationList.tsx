// The notifications list: every notification of the signed-in person, newest first, with "mark
// read" and "load more". A component so that any page can show it (the notifications page today;
// the messages page can reuse it).
import { useState } from 'react';
import { fetchNotifications, markNotificationRead } from '../api/notifications';
import type { NotificationItem } from '../api/types';
import { formatDateTime } from '../lib/format';
import { useT } from '../lib/i18n';
import { useAsync } from '../lib/useAsync';
import { toastFailure } from '../stores/feedback';
import { useNotifications } from '../stores/notifications';
import { LoadMore } from './LoadMore';
import { AsyncItems } from './sections';

const PAGE = 20;

export function NotificationList() {
  const t = useT();
  const [unreadOnly, setUnreadOnly] = useState(false);
  const state = useAsync((_signal) => fetchNotifications(0, PAGE, unreadOnly), [unreadOnly]);
  const read = (n: NotificationItem) =>
    toastFailure(async () => {
      await markNotificationRead(n.id);
      state.setData((prev) => prev && { ...prev, items: prev.items.map((i) => (i.id === n.id ? { ...i, read: true } : i)) });
      useNotifications.setState((s) => ({
        preview: s.preview.filter((p) => p.id !== n.id),
        stats: s.stats ? { ...s.stats, unread: Math.max(0, s.stats.unread - 1), read: s.stats.read + 1 } : s.stats,
      }));
    });
  return (
    <div className="stack">
      <div className="segmented" role="group" aria-label={t('notifications_filter')}>
        <button type="button" aria-pressed={!unreadOnly} onClick={() => setUnreadOnly(false)}>
          {t('notifications_all')}
        </button>
        <button type="button" aria-pressed={unreadOnly} onClick={() => setUnreadOnly(true)}>
          {t('notifications_unread')}
        </button>
      </div>
      <AsyncItems state={state} emptyIcon="bell" emptyTitle={unreadOnly ? t('no_unread') : t('no_notifications')}>
        {(items) => (
          <ul className="notification-list card" role="list">
            {items.map((n) => (
              <li key={n.id} className={n.read ? 'is-read' : 'is-unread'}>
                <div>
                  <strong>{n.title}</strong>
                  <p>{n.body}</p>
                  <time dateTime={n.created_at}>{formatDateTime(n.created_at)}</time>
                </div>
                {n.read ? (
                  <span className="muted small">{t('notification_read')}</span>
                ) : (
                  <button type="button" className="button ghost small" onClick={() => void read(n)}>
                    {t('mark_read')}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </AsyncItems>
      <LoadMore state={state} fetchPage={(offset) => fetchNotifications(offset, PAGE, unreadOnly)} />
    </div>
  );
}
