// Every notification of the person (what the bell's "View all" opens), in the reader's language:
// the server writes title and body in the request's language, so a language change loads again
// (useAsync does it).
import { fetchNotificationStats, fetchNotifications, markNotificationRead } from '../../api/notifications';
import { LoadMore } from '../../components/LoadMore';
import { NotificationTitle } from '../../components/social/NotificationTitle';
import { AsyncItems } from '../../components/sections';
import { formatDateTime } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { toastFailure } from '../../stores/feedback';
import { useLiveEvent } from '../../stores/live';
import { useNotifications } from '../../stores/notifications';

const PAGE = 20;

export function NotificationsList() {
  const t = useT();
  const state = useAsync(() => fetchNotifications(0, PAGE), []);
  useLiveEvent((e) => {
    if (e.kind === 'notification' || e.kind === 'reload') state.refresh();
  });
  const read = (id: string) =>
    toastFailure(async () => {
      await markNotificationRead(id);
      state.setData((page) => page && { ...page, items: page.items.map((n) => (n.id === id ? { ...n, read: true } : n)) });
      useNotifications.setState((s) => ({ stats: s.stats && { ...s.stats, unread: Math.max(0, s.stats.unread - 1), read: s.stats.read + 1 }, preview: s.preview.filter((n) => n.id !== id) }));
      void fetchNotificationStats().then((stats) => useNotifications.setState({ stats }), () => undefined);
    });
  return (
    <section className="card" aria-labelledby="notifications-title">
      <h2 id="notifications-title">{t('notifications')}</h2>
      <AsyncItems state={state} emptyIcon="bell" emptyTitle={t('no_notifications')}>
        {(items) => (
          <ul className="notification-list full">
            {items.map((n) => (
              <li key={n.id} className={n.read ? 'read' : 'unread'} data-notification={n.id}>
                <div>
                  <NotificationTitle n={n} onOpen={() => (n.read ? undefined : void read(n.id))} />
                  <p>{n.body}</p>
                  <time dateTime={n.created_at}>{formatDateTime(n.created_at)}</time>
                </div>
                {n.read ? (
                  <span className="muted small-text">{t('read_receipt')}</span>
                ) : (
                  <button type="button" className="button ghost small" onClick={() => void read(n.id)}>
                    {t('mark_read')}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </AsyncItems>
      <LoadMore state={state} fetchPage={(offset) => fetchNotifications(offset, PAGE)} />
    </section>
  );
}
