// A notification's title: a link to the page it is about when it has one (issue 26: `path`),
// shared by the bell and the notifications list. Opening it counts as reading it.
import { Link } from 'react-router';
import type { NotificationItem } from '../../api/types';
import { safeRedirect } from '../../lib/paths';

export function NotificationTitle({ n, onOpen }: { n: NotificationItem; onOpen: () => void }) {
  const to = safeRedirect(n.path, '');
  return (
    <strong>
      {to ? (
        <Link to={to} onClick={onOpen} className="notification-link">
          {n.title}
        </Link>
      ) : (
        n.title
      )}
    </strong>
  );
}
