// Page frames: the public front layout, the mobile layout, the centred card layout, the console.
import { Suspense, useEffect, useState, type ReactNode } from 'react';
import { Link, NavLink, Outlet, useLocation } from 'react-router';
import type { MenuEntry } from '../api/types';
import { Icon } from '../components/Icon';
import { SkeletonLines, Spinner } from '../components/placeholders';
import { useSession } from '../stores/session';
import { useSettings } from '../stores/settings';
import { consoleTitleKey, legalTexts, paths } from '../lib/paths';
import { useBoot } from '../stores/boot';
import { useT } from '../lib/i18n';
import { CompanySwitcher, NotificationBell, PhoneAccount, SettingsButton, UserMenu } from './header';
import { LanguageSwitcher } from '../components/LanguageSwitcher';
import { Guard } from './Guard';
import { isExternalLink, visibleMenu } from './menu';
import { ProgressWhileMounted } from './RouteEffects';
import { Badge } from '../components/Badge';
import { useLive } from '../stores/live';
import { useLiveEvents } from './useLiveEvents';

function Brand({ to = paths.market.home() }: { to?: string }) {
  const boot = useBoot();
  return (
    <Link to={to} className="brand">
      <span className="brand-mark" aria-hidden="true">
        Z
      </span>
      <span className="brand-name">{boot.productName}</span>
    </Link>
  );
}

function SkipLink() {
  const t = useT();
  return (
    <a className="skip-link" href="#main">
      {t('skip_to_content')}
    </a>
  );
}

/** Visitors' account area: sign-in, or the console link once a stored session was read. */
function AccountLinks() {
  const t = useT();
  const loaded = useSession((s) => s.loaded);
  const token = useSession((s) => s.token);
  if (loaded && token) {
    return (
      <Link to={paths.console.app()} className="button primary small">
        {t('console')}
      </Link>
    );
  }
  return (
    <>
      <Link to={paths.auth.signIn()} className="button ghost small">
        {t('sign_in')}
      </Link>
      <Link to={paths.auth.signUp()} className="button primary small hide-narrow">
        {t('sign_up')}
      </Link>
    </>
  );
}

function PageSuspense({ children }: { children: ReactNode }) {
  return <Suspense fallback={<ProgressWhileMounted><PageLoading /></ProgressWhileMounted>}>{children}</Suspense>;
}

function PageLoading() {
  const t = useT();
  return (
    <div className="page-loading">
      <Spinner label={t('loading')} />
    </div>
  );
}

function Footer() {
  const t = useT();
  const boot = useBoot();
  return (
    <footer className="site-footer">
      <span>
        © {boot.productName} · {t('footer_note')}
      </span>
      <nav aria-label={t('footer_note')}>
        <a href={legalTexts.terms}>{t('terms_of_use')}</a>
        <a href={legalTexts.privacy}>{t('privacy_policy')}</a>
        <a href={paths.documents.guide()}>{t('guide')}</a>
        <Link to={paths.download()}>{t('download')}</Link>
      </nav>
    </footer>
  );
}

export function FrontLayout() {
  const t = useT();
  const [open, setOpen] = useState(false);
  const location = useLocation();
  useEffect(() => setOpen(false), [location.pathname]);
  return (
    <div className="front">
      <SkipLink />
      <header className="site-header">
        <Brand />
        <button
          type="button"
          className="icon-button show-narrow"
          aria-label={t('open_menu')}
          aria-expanded={open}
          aria-controls="front-nav"
          onClick={() => setOpen(!open)}
        >
          <Icon name="menu" />
        </button>
        <nav id="front-nav" className={open ? 'site-nav open' : 'site-nav'} aria-label={t('main_navigation')}>
          <NavLink to={paths.market.home()} end={false}>
            {t('explore_market')}
          </NavLink>
          <NavLink to={paths.nearby.home()}>{t('nearby')}</NavLink>
          <NavLink to={paths.onDemand.home()}>{t('on_demand')}</NavLink>
          <NavLink to={paths.download()}>{t('download')}</NavLink>
          <NavLink to={paths.documents.guide()} reloadDocument>
            {t('guide')}
          </NavLink>
        </nav>
        <div className="header-actions">
          <LanguageSwitcher />
          <AccountLinks />
        </div>
      </header>
      <main id="main" className="front-main">
        <PageSuspense>
          <Outlet />
        </PageSuspense>
      </main>
      <Footer />
    </div>
  );
}

export function MobileLayout() {
  const t = useT();
  return (
    <div className="mobile">
      <header className="mobile-header">
        <Brand to={paths.mobile.market()} />
        <div className="header-actions">
          <LanguageSwitcher />
          <PhoneAccount />
        </div>
      </header>
      <main id="main" className="mobile-main">
        <PageSuspense>
          <Outlet />
        </PageSuspense>
      </main>
      <nav className="tab-bar" aria-label={t('main_navigation')}>
        <NavLink to={paths.mobile.market()}>
          <Icon name="market" />
          <span>{t('explore_market')}</span>
        </NavLink>
        <NavLink to={paths.mobile.nearby()}>
          <Icon name="nearby" />
          <span>{t('nearby')}</span>
        </NavLink>
        <NavLink to={paths.mobile.app()}>
          <Icon name={paths.console.app.pattern} />
          <span>{t('z_app')}</span>
        </NavLink>
        <NavLink to={paths.download()}>
          <Icon name="download" />
          <span>{t('download')}</span>
        </NavLink>
      </nav>
    </div>
  );
}

/** Sign-in, sign-up, email pages, error pages: a centred card under a slim header. */
export function CenteredLayout({ children }: { children?: ReactNode }) {
  return (
    <div className="centered">
      <SkipLink />
      <header className="slim-header">
        <Brand />
        <LanguageSwitcher />
      </header>
      <main id="main" className="centered-main">
        <PageSuspense>{children ?? <Outlet />}</PageSuspense>
      </main>
    </div>
  );
}

function menuLabel(entry: MenuEntry, t: ReturnType<typeof useT>): string {
  const key = consoleTitleKey(entry.path);
  if (key) return t(key);
  return entry.meta?.title || entry.name || entry.path;
}

/** The live counts beside a menu entry: unread messages, friend requests waiting. */
function MenuBadge({ path }: { path: string }) {
  const t = useT();
  const counts = useLive((s) => s.counts);
  if (!counts) return null;
  path = path.startsWith('/') ? path : `/${path}`;
  if (path === paths.console.messages.pattern) return <Badge count={counts.unread_messages} label={t('unread_messages')} />;
  if (path === paths.console.friends.pattern) return <Badge count={counts.pending_friend_requests} label={t('friend_requests')} />;
  return null;
}

function SideMenu({ collapsed }: { collapsed: boolean }) {
  const t = useT();
  const menu = useSession((s) => s.menu);
  if (!menu) {
    return (
      <div className="menu-skeleton" aria-hidden="true">
        {Array.from({ length: 7 }, (_, i) => (
          <span key={i} className="skeleton menu-skeleton-item" />
        ))}
      </div>
    );
  }
  const render = (entries: MenuEntry[], depth: number): ReactNode => (
    <ul className={depth ? 'menu-children' : 'menu-list'}>
      {entries.map((e) => {
        const external = isExternalLink(e);
        const label = menuLabel(e, t);
        return (
          <li key={e.path}>
            {external ? (
              <a href={external} target="_blank" rel="noreferrer" className="menu-item" title={collapsed ? label : undefined}>
                <Icon name={e.meta?.icon || e.path} />
                <span className="menu-label">{label}</span>
              </a>
            ) : (
              <NavLink to={e.path} className="menu-item" title={collapsed ? label : undefined}>
                <Icon name={e.meta?.icon || e.path} />
                <span className="menu-label">{label}</span>
                <MenuBadge path={e.path} />
              </NavLink>
            )}
            {e.children?.length ? render(e.children, depth + 1) : null}
          </li>
        );
      })}
    </ul>
  );
  return render(visibleMenu(menu), 0);
}

function Tabs() {
  const t = useT();
  const location = useLocation();
  const [visited, setVisited] = useState<string[]>([]);
  useEffect(() => {
    const p = location.pathname;
    setVisited((v) => (v.includes(p) ? v : [...v, p].slice(-8)));
  }, [location.pathname]);
  if (!visited.length) return null;
  return (
    <nav className="page-tabs" aria-label={t('show_tabs')}>
      {visited.map((p) => {
        const key = consoleTitleKey(p);
        return (
          <span key={p} className={p === location.pathname ? 'page-tab active' : 'page-tab'}>
            <Link to={p}>{key ? t(key) : p}</Link>
            {visited.length > 1 ? (
              <button
                type="button"
                className="icon-button small"
                aria-label={`${t('close')} ${key ? t(key) : p}`}
                onClick={() => setVisited((v) => v.filter((x) => x !== p))}
              >
                <Icon name="close" size={12} />
              </button>
            ) : null}
          </span>
        );
      })}
    </nav>
  );
}

export function ConsoleLayout() {
  const t = useT();
  useLiveEvents();
  const collapse = useSettings((s) => s.collapse);
  const setSettings = useSettings((s) => s.set);
  const layout = useSettings((s) => s.layout);
  const tabs = useSettings((s) => s.tabs);
  const [mobileOpen, setMobileOpen] = useState(false);
  const location = useLocation();
  useEffect(() => setMobileOpen(false), [location.pathname]);
  const classes = ['console', collapse ? 'collapsed' : '', layout === 'horizontal' ? 'horizontal' : '', mobileOpen ? 'menu-open' : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className={classes}>
      <SkipLink />
      <aside className="sidebar" aria-label={t('console_menu')}>
        <div className="sidebar-top">
          <Brand to={paths.console.app()} />
        </div>
        <nav className="side-menu" aria-label={t('console_menu')}>
          <SideMenu collapsed={collapse} />
        </nav>
        {/* A narrow screen's header keeps the menu button, the bell and the avatar; the rest of it
            is here, in the menu it opens (issue 41). */}
        {mobileOpen ? (
          <div className="sidebar-tools show-narrow">
            <CompanySwitcher />
            <LanguageSwitcher />
            <SettingsButton />
          </div>
        ) : null}
        <button
          type="button"
          className="collapse-button hide-narrow"
          aria-label={collapse ? t('expand_menu') : t('collapse_menu')}
          onClick={() => setSettings({ collapse: !collapse })}
        >
          <Icon name={collapse ? 'chevronRight' : 'chevronLeft'} size={16} />
        </button>
      </aside>
      <div className="console-body">
        <header className="console-header">
          <button
            type="button"
            className="icon-button show-narrow"
            aria-label={t('open_menu')}
            aria-expanded={mobileOpen}
            onClick={() => setMobileOpen(!mobileOpen)}
          >
            <Icon name="menu" />
          </button>
          <nav className="console-crumbs" aria-label={t('main_navigation')}>
            <NavLink to={paths.market.home()}>{t('explore_market')}</NavLink>
            <NavLink to={paths.nearby.home()}>{t('nearby')}</NavLink>
            <NavLink to={paths.documents.guide()} reloadDocument>
              {t('guide')}
            </NavLink>
          </nav>
          <div className="header-actions">
            <span className="hide-narrow">
              <CompanySwitcher />
            </span>
            <NotificationBell />
            <span className="hide-narrow">
              <LanguageSwitcher />
            </span>
            <span className="hide-narrow">
              <SettingsButton />
            </span>
            <UserMenu />
          </div>
        </header>
        {tabs ? <Tabs /> : null}
        <main id="main" className="console-main">
          <Guard
            fallback={
              <div className="console-skeleton">
                <SkeletonLines lines={5} />
              </div>
            }
          >
            <PageSuspense>
              <Outlet />
            </PageSuspense>
          </Guard>
        </main>
      </div>
      {mobileOpen ? <div className="scrim show-narrow" onClick={() => setMobileOpen(false)} aria-hidden="true" /> : null}
    </div>
  );
}
