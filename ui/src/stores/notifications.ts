import { create } from 'zustand';
import type { NotificationItem, NotificationStats } from '../api/types';

/** Server notifications of the signed-in user: stats polled every 10 s and the unread preview. */
interface NotificationsState {
  stats: NotificationStats | null;
  preview: NotificationItem[];
}

export const useNotifications = create<NotificationsState>()(() => ({ stats: null, preview: [] }));

export function resetNotifications() {
  useNotifications.setState({ stats: null, preview: [] });
}
