// A notification's title: a link to the page it is about when it has one (issue 26: `path`),
// shared by the bell and the notifications list. Opening it counts as reading it. On the phone pages
// it opens the page's phone twin (issue 41) when there is one.
import { Link } from 'react-router';
import type { NotificationItem } from '../../api/types';
import { onPhone, safeRedirect, usePublicPaths } from '../../lib/paths';

export function NotificationTitle({ n, onOpen }: { n: NotificationItem; onOpen: () => void }) {
  const { mobile } = usePublicPaths();
  const path = safeRedirect(n.path, '');
  const to = mobile && path ? onPhone(path) : path;
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
