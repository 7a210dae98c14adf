import { UNREAD_PREVIEW_LIMIT } from '../constants';
import type { ResponseMeta } from '../lib/http';
import { api } from './client';
import type { ListPage, NotificationItem, NotificationStats } from './types';

/** The last stats answer and its ETag (made of every counter, so equal tags mean equal stats). */
let held: { etag: string; stats: NotificationStats } | null = null;

/**
 * The bell's counters. Every poll sends the ETag of the last answer: while nothing changed the
 * server answers 304 with no body and the stats held are returned (the same object: no re-render).
 */
export async function fetchNotificationStats(): Promise<NotificationStats> {
  const meta: ResponseMeta = {};
  const last = held;
  const stats = await api.get<NotificationStats>('/api/ebs/v1/notifications/stats', { ifNoneMatch: last?.etag, meta });
  if (meta.notModified && last) return last.stats;
  held = meta.etag ? { etag: meta.etag, stats } : null;
  return stats;
}

export const fetchUnreadPreview = () =>
  api.get<ListPage<NotificationItem>>('/api/ebs/v1/notifications', {
    query: { offset: 0, limit: UNREAD_PREVIEW_LIMIT, filter: 'unread' },
  });

export const markNotificationRead = (id: string) =>
  api.put<null>(`/api/ebs/v1/notifications/${encodeURIComponent(id)}/read`);

/** The person's notifications, newest first, in the request's language. */
export const fetchNotifications = (offset: number, limit: number) =>
  api.get<ListPage<NotificationItem>>('/api/ebs/v1/notifications', { query: { offset, limit } });
