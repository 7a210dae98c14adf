// Client-only behaviour mounted once at the root: boot steps, titles, progress, redirects, errors.
import { Component, useEffect, useRef, type ErrorInfo, type ReactNode } from 'react';
import { useLocation, useNavigate, useNavigationType } from 'react-router';
import { UNCAUGHT_ERROR_TOAST_MS, SW_RELOAD_FLAG } from '../constants';
import { isLang, type Lang } from '../i18n';
import { loadStoredSettings, SETTINGS_KEY, useSettings } from '../stores/settings';
import { loadSession, SESSION_KEYS } from '../stores/session';
import { toast } from '../stores/feedback';
import { startTokenRefresh } from '../api/refresh';
import { hasNavigated, markNavigated, useBoot } from '../stores/boot';
import { registerNavigate } from '../lib/navigation';
import { doneProgress, resetProgress, startProgress } from './progress';
import { useT } from '../lib/i18n';
import { paths, phoneRedirectTarget } from '../lib/paths';

/** Starts the progress bar while mounted (used as a Suspense fallback: lazy pages loading). */
export function ProgressWhileMounted({ children }: { children?: ReactNode }) {
  useEffect(() => {
    startProgress();
    return () => doneProgress();
  }, []);
  return <>{children}</>;
}

/** Service worker caches are cleared and the page reloaded once per session (docs/product.md §9). */
export async function clearServiceWorkersOnce(): Promise<boolean> {
  if (typeof window === 'undefined' || typeof sessionStorage === 'undefined') return false;
  try {
    if (sessionStorage.getItem(SW_RELOAD_FLAG)) return false;
    sessionStorage.setItem(SW_RELOAD_FLAG, '1');
  } catch {
    return false;
  }
  const registrations =
    'serviceWorker' in navigator && navigator.serviceWorker ? await navigator.serviceWorker.getRegistrations() : [];
  const cacheKeys = typeof caches !== 'undefined' ? await caches.keys() : [];
  if (!registrations.length && !cacheKeys.length) return false;
  await Promise.all(registrations.map((r) => r.unregister()));
  await Promise.all(cacheKeys.map((k) => caches.delete(k)));
  window.location.reload();
  return true;
}

type TitleFor = (pathname: string, lang: Lang, product: string, subjectNotFound: boolean) => string;

export function ClientEffects({ titleFor }: { titleFor: TitleFor }) {
  const location = useLocation();
  const navigate = useNavigate();
  const boot = useBoot();
  const lang = useSettings((s) => s.language);
  // The location the server rendered; compared by value so StrictMode's effect re-runs are harmless.
  const initialLocation = useRef(location.pathname + location.search);

  useEffect(() => {
    registerNavigate((to, opts) => navigate(to, opts));
    return () => registerNavigate(null);
  }, [navigate]);

  // Once, after hydration: stored settings and language, the session, cross-tab sync, error toasts.
  useEffect(() => {
    loadStoredSettings(window.location.search, navigator.language);
    loadSession();
    const onStorage = (e: StorageEvent) => {
      if (e.key === null || (Object.values(SESSION_KEYS) as string[]).includes(e.key)) loadSession();
      if (e.key === SETTINGS_KEY) loadStoredSettings('', navigator.language);
    };
    const onError = (e: ErrorEvent) => {
      // Resource load errors (images) have no error object; only script errors get a toast.
      if (!e.error && !e.message) return;
      toast('error', e.message || String(e.error), UNCAUGHT_ERROR_TOAST_MS);
    };
    const onRejection = (e: PromiseRejectionEvent) => {
      const reason = e.reason;
      const text = reason instanceof Error ? reason.message : String(reason);
      toast('error', text, UNCAUGHT_ERROR_TOAST_MS);
    };
    window.addEventListener('storage', onStorage);
    window.addEventListener('error', onError);
    window.addEventListener('unhandledrejection', onRejection);
    const stopRefresh = startTokenRefresh();
    void clearServiceWorkersOnce();
    return () => {
      window.removeEventListener('storage', onStorage);
      window.removeEventListener('error', onError);
      window.removeEventListener('unhandledrejection', onRejection);
      stopRefresh();
    };
  }, []);

  // A new page opens at its top (issue 26: /friends scrolled down, then Message, left the Messages
  // heading under the sticky header). Back and forward keep the browser's own restoring; a
  // change of the query alone (filters, the open conversation) keeps the place.
  const navigationType = useNavigationType();
  useEffect(() => {
    if (navigationType !== 'POP' && !location.hash) window.scrollTo(0, 0);
  }, [location.pathname, location.hash, navigationType]);

  // Per location: phone redirect, ?language=, title, progress, first-location data.
  useEffect(() => {
    const target = phoneRedirectTarget(location.pathname, location.search, navigator.userAgent);
    if (target) {
      navigate(target, { replace: true });
      return;
    }
    const q = new URLSearchParams(location.search).get('language');
    if (isLang(q) && q !== useSettings.getState().language) useSettings.getState().setLanguage(q);
    if (location.pathname + location.search === initialLocation.current && !hasNavigated()) return;
    markNavigated();
    startProgress();
    const timer = setTimeout(doneProgress, 0);
    return () => clearTimeout(timer);
  }, [location.pathname, location.search, navigate]);

  useEffect(() => {
    // Runs after the per-location effect above, so hasNavigated() already counts this location:
    // only the first location can carry the server's "subject not found".
    const subjectNotFound = !hasNavigated() && boot.data.notFound === true;
    document.title = titleFor(location.pathname, lang, boot.productName, subjectNotFound);
    document.documentElement.lang = lang; // the same value the server rendered (zh | en)
  }, [location.pathname, lang, boot.productName, boot.data.notFound, titleFor]);

  return null;
}

/** Keeps <html data-theme>, the theme colour and the grey / colour-weak filters in step with settings. */
export function ThemeSync() {
  const location = useLocation();
  const dark = useSettings((s) => s.dark);
  const grey = useSettings((s) => s.grey);
  const weak = useSettings((s) => s.weak);
  const color = useSettings((s) => s.themeColor);
  useEffect(() => {
    const root = document.documentElement;
    const light = location.pathname === paths.nearby.map.pattern || !dark;
    root.dataset.theme = light ? 'light' : 'dark';
    root.style.setProperty('--primary', color);
    root.classList.toggle('mode-grey', grey);
    root.classList.toggle('mode-weak', weak);
  }, [location.pathname, dark, grey, weak, color]);
  return null;
}

interface BoundaryProps {
  children: ReactNode;
  resetKey: string;
  fallback: (retry: () => void) => ReactNode;
}

/** Route-level errors: the progress bar stops and a message with a retry button is shown. */
export class RouteErrorBoundary extends Component<BoundaryProps, { error: Error | null; key: string }> {
  state = { error: null as Error | null, key: this.props.resetKey };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  static getDerivedStateFromProps(props: BoundaryProps, state: { error: Error | null; key: string }) {
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
  }

  componentDidCatch(error: Error, info: ErrorInfo) {
    resetProgress();
    console.error('route error', error, info.componentStack);
  }

  render() {
    if (this.state.error) return this.props.fallback(() => this.setState({ error: null }));
    return this.props.children;
  }
}

export function RouteErrorContent({ retry }: { retry: () => void }) {
  const t = useT();
  return (
    <div className="container error-page" role="alert">
      <h1>{t('something_went_wrong')}</h1>
      <button type="button" className="button primary" onClick={retry}>
        {t('retry')}
      </button>
    </div>
  );
}

