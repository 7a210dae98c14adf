import { NotificationList } from '../../components/NotificationList';
import { PageHeader } from '../../components/sections';
import { useT } from '../../lib/i18n';

/** /notifications: the bell's "View all". */
export default function NotificationsPage() {
  const t = useT();
  return (
    <div className="page narrow">
      <PageHeader title={t('notifications')} />
      <NotificationList />
    </div>
  );
}
