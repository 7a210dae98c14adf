// /m/notifications (issue 41): the person's notifications on a phone, the list the desktop shows
// under /messages?tab=notifications; their links open the phone twin of the page they are about.
import { PageHeader } from '../../components/sections';
import { useT } from '../../lib/i18n';
import { NotificationsList } from './NotificationsList';

export default function PhoneNotificationsPage() {
  const t = useT();
  return (
    <div className="page stack">
      <PageHeader title={t('notifications')} />
      <NotificationsList />
    </div>
  );
}
