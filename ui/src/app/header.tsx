// Header widgets: company switcher, notifications, user menu, settings.
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { NOTIFICATION_POLL_MS, PERSONAL_SME_ID } from '../constants';
import { errorText } from '../lib/http';
import { fetchNotificationStats, fetchUnreadPreview, markNotificationRead } from '../api/notifications';
import { useSession } from '../stores/session';
import { useSettings } from '../stores/settings';
import { useNotifications } from '../stores/notifications';
import { toast, toastFailure, withLoading } from '../stores/feedback';
import { Badge } from '../components/Badge';
import { NotificationTitle } from '../components/social/NotificationTitle';
import { Icon } from '../components/Icon';
import { formatDateTime } from '../lib/format';
import { paths, safeRedirect } from '../lib/paths';
import { useT } from '../lib/i18n';
import { Avatar } from '../components/Avatar';
import { reloadOrganizations, signOut, switchCompany } from '../api/sessionActions';
import { poll } from '../lib/timing';
import { navigateTo } from '../lib/navigation';
import { SettingsDialog } from './SettingsDialog';

/** Closes a popover on outside click and Escape. */
function usePopover() {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setOpen(false);
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  return { open, setOpen, ref };
}

/** The switcher's last entry: not a company but the way to create or join one. */
const CREATE_OR_JOIN = '__create_or_join';

export function CompanySwitcher() {
  const t = useT();
  const loaded = useSession((s) => s.loaded);
  const smeId = useSession((s) => s.smeId);
  const orgs = useSession((s) => s.organizationList);
  const token = useSession((s) => s.token);
  // The list stored at sign-in goes stale when a company is joined elsewhere (the mailed link in
  // another tab or browser, issue 26): read again on every page load and whenever the switcher
  // is about to open.
  const signedIn = loaded && Boolean(token);
  useEffect(() => {
    if (signedIn) void reloadOrganizations().catch(() => undefined);
  }, [signedIn]);
  if (!loaded || orgs.length === 0) return null;
  const onChange = (id: string) => {
    if (id === CREATE_OR_JOIN) {
      navigateTo(paths.companies.email());
      return;
    }
    if (id === smeId) return;
    void toastFailure(() => withLoading(() => switchCompany(id)));
  };
  return (
    <label className="company-switcher">
      <span className="visually-hidden">{t('switch_company')}</span>
      <Icon name="company" size={16} />
      <select
        aria-label={t('switch_company')}
        value={smeId}
        onChange={(e) => onChange(e.target.value)}
        onFocus={() => void reloadOrganizations().catch(() => undefined)}
      >
        {orgs.map((o) => (
          <option key={o.id} value={o.id}>
            {o.id === PERSONAL_SME_ID ? t('personal') : o.name}
          </option>
        ))}
        <option value={CREATE_OR_JOIN}>{t('create_or_join_company')}</option>
      </select>
    </label>
  );
}

/**
 * Polls the notification stats (docs/product.md §6: only for signed-in individual users outside PC
 * mode); true while it does.
 */
function useNotificationPolling(): boolean {
  const loaded = useSession((s) => s.loaded);
  const token = useSession((s) => s.token);
  const userType = useSession((s) => s.userType);
  const pcMode = useSettings((s) => s.isPCMode);
  const polling = loaded && Boolean(token) && userType === 'user' && !pcMode;
  useEffect(() => {
    if (!polling) return;
    return poll(async () => {
      // A poll while the browser is offline would only fail (and send the page to /500).
      if (!navigator.onLine) return;
      const s = await fetchNotificationStats();
      useNotifications.setState({ stats: s });
    }, NOTIFICATION_POLL_MS);
  }, [polling]);
  return polling;
}

export function NotificationBell() {
  const t = useT();
  const stats = useNotifications((s) => s.stats);
  const preview = useNotifications((s) => s.preview);
  const { open, setOpen, ref } = usePopover();
  const polling = useNotificationPolling();

  useEffect(() => {
    if (!open || !polling) return;
    fetchUnreadPreview()
      .then((page) => useNotifications.setState({ preview: page.items ?? [] }))
      .catch((err) => toast('error', errorText(err)));
  }, [open, polling]);

  if (!polling) return null;
  const unread = stats?.unread ?? 0;
  const read = (id: string) =>
    toastFailure(async () => {
      await markNotificationRead(id);
      useNotifications.setState((s) => ({
        preview: s.preview.filter((n) => n.id !== id),
        stats: s.stats ? { ...s.stats, unread: Math.max(0, s.stats.unread - 1), read: s.stats.read + 1 } : s.stats,
      }));
    });
  return (
    <div className="popover-anchor" ref={ref}>
      <button
        type="button"
        className="icon-button"
        aria-label={t('notifications')}
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        <Icon name="bell" />
        <Badge count={unread} />
      </button>
      {open ? (
        <div className="popover notifications-popover">
          <h2 className="popover-title">{t('notifications')}</h2>
          {preview.length === 0 ? (
            <p className="muted">{t('no_unread')}</p>
          ) : (
            <ul className="notification-list">
              {preview.map((n) => (
                <li key={n.id}>
                  <div>
                    <NotificationTitle
                      n={n}
                      onOpen={() => {
                        setOpen(false);
                        void read(n.id);
                      }}
                    />
                    <p>{n.body}</p>
                    <time dateTime={n.created_at}>{formatDateTime(n.created_at)}</time>
                  </div>
                  <button type="button" className="button ghost small" onClick={() => void read(n.id)}>
                    {t('mark_read')}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <Link className="popover-footer-link" to={paths.console.messages({ tab: 'notifications' })} onClick={() => setOpen(false)}>
            {t('view_all')}
          </Link>
        </div>
      ) : null}
    </div>
  );
}

export function UserMenu() {
  const t = useT();
  const loaded = useSession((s) => s.loaded);
  const info = useSession((s) => s.userInfo);
  const token = useSession((s) => s.token);
  const { open, setOpen, ref } = usePopover();
  if (!loaded) return <span className="skeleton avatar-skeleton" aria-hidden="true" />;
  if (!token) return null;
  return (
    <div className="popover-anchor" ref={ref}>
      <button type="button" className="user-button" aria-label={t('user_menu')} aria-expanded={open} onClick={() => setOpen(!open)}>
        <Avatar name={info.name || info.email} url={info.avatar_url} />
        <span className="user-name">{info.name || info.email}</span>
        <Icon name="chevronDown" size={14} />
      </button>
      {open ? (
        <div className="popover user-popover">
          <p className="popover-title">{info.email}</p>
          <nav aria-label={t('user_menu')}>
            <Link to={paths.console.account()} onClick={() => setOpen(false)}>
              <Icon name="account" size={16} /> {t('account')}
            </Link>
            <Link to={paths.console.password()} onClick={() => setOpen(false)}>
              <Icon name="settings" size={16} /> {t('change_password')}
            </Link>
          </nav>
          <button type="button" className="button ghost full" onClick={() => void signOut()}>
            <Icon name="logout" size={16} /> {t('sign_out')}
          </button>
        </div>
      ) : null}
    </div>
  );
}

/**
 * The phone header's account entry (issue 41): "Sign in" for a visitor (and on the server, before the
 * stored session is read), else the avatar with the unread count, opening the phone console's
 * pages and Sign out.
 */
export function PhoneAccount() {
  const t = useT();
  const loaded = useSession((s) => s.loaded);
  const token = useSession((s) => s.token);
  const info = useSession((s) => s.userInfo);
  const person = useSession((s) => s.userType === 'user');
  const unread = useNotifications((s) => s.stats?.unread ?? 0);
  const location = useLocation();
  const { open, setOpen, ref } = usePopover();
  useNotificationPolling();
  useEffect(() => setOpen(false), [location.pathname, setOpen]);
  if (!loaded || !token) {
    // Back to this page after signing in (not to a sign-in page).
    const back = safeRedirect(location.pathname + location.search, '') || undefined;
    return (
      <Link className="button ghost small" to={paths.mobile.signIn(back)} data-phone-account="signin">
        {t('sign_in')}
      </Link>
    );
  }
  return (
    <div className="popover-anchor" ref={ref} data-phone-account="user">
      <button type="button" className="user-button" aria-label={t('user_menu')} aria-expanded={open} onClick={() => setOpen(!open)}>
        <Avatar name={info.name || info.email} url={info.avatar_url} />
        <Badge count={unread} label={t('unread')} />
      </button>
      {open ? (
        <div className="popover user-popover">
          <p className="popover-title">{info.email}</p>
          <nav aria-label={t('user_menu')}>
            <Link to={paths.mobile.app()}>
              <Icon name="/app" size={16} /> {t('z_app')}
            </Link>
            {/* A company context's menu has no wallet or messages (docs/product.md §2). */}
            {person ? (
              <>
                <Link to={paths.mobile.wallet()}>
                  <Icon name="wallet" size={16} /> {t('wallet')}
                </Link>
                <Link to={paths.mobile.notifications()}>
                  <Icon name="bell" size={16} /> {t('notifications')} <Badge count={unread} label={t('unread')} />
                </Link>
              </>
            ) : null}
          </nav>
          <button type="button" className="button ghost full" onClick={() => void signOut()}>
            <Icon name="logout" size={16} /> {t('sign_out')}
          </button>
        </div>
      ) : null}
    </div>
  );
}

export function SettingsButton() {
  const t = useT();
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="icon-button" aria-label={t('settings')} onClick={() => setOpen(true)}>
        <Icon name="settings" />
      </button>
      <SettingsDialog open={open} onClose={() => setOpen(false)} />
    </>
  );
}
