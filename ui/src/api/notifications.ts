import { UNREAD_PREVIEW_LIMIT } from '../constants';
import { api } from './client';
import type { ListPage, NotificationItem, NotificationStats } from './types';

export const fetchNotificationStats = () => api.get<NotificationStats>('/api/ebs/v1/notifications/stats');

export const fetchUnreadPreview = () =>
  api.get<ListPage<NotificationItem>>('/api/ebs/v1/notifications', {
    query: { offset: 0, limit: UNREAD_PREVIEW_LIMIT, filter: 'unread' },
  });

export const markNotificationRead = (id: string) =>
  api.put<null>(`/api/ebs/v1/notifications/${encodeURIComponent(id)}/read`);

/** The person's notifications, newest first, in the request's language. */
export const fetchNotifications = (offset: number, limit: number) =>
  api.get<ListPage<NotificationItem>>('/api/ebs/v1/notifications', { query: { offset, limit } });
