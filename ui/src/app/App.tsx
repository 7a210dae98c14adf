import { useCallback, useMemo, type ReactNode } from 'react';
import { useLocation, useRoutes } from 'react-router';
import { BootContext, type BootState } from '../stores/boot';
import { ClientEffects, RouteErrorBoundary, RouteErrorContent, ThemeSync } from './RouteEffects';
import { LoadingOverlay, Notices, ProgressBar, Toasts } from '../components/Feedback';
import { useSession } from '../stores/session';
import { useSettings } from '../stores/settings';
import { LangContext, useReadyLang } from '../lib/i18n';
import type { Lang } from '../i18n';
import { buildRoutes, matchedBranch, pageHandle, titleFromHandle } from './routes';

function Routed() {
  const menu = useSession((s) => s.menu);
  const routes = useMemo(() => buildRoutes(menu), [menu]);
  const location = useLocation();
  // The same element useRoutes(routes) gives, matched against the one branch the path takes.
  const element = useRoutes(matchedBranch(routes, location.pathname));
  const titleFor = useCallback(
    (pathname: string, lang: Lang, product: string, subjectNotFound: boolean) =>
      titleFromHandle(pageHandle(pathname, menu, subjectNotFound), lang, product),
    [menu],
  );
  return (
    <>
      <RouteErrorBoundary resetKey={location.pathname} fallback={(retry) => <RouteErrorContent retry={retry} />}>
        {element}
      </RouteErrorBoundary>
      <ClientEffects titleFor={titleFor} />
      <ThemeSync />
    </>
  );
}

/**
 * The interface language. On the server and during hydration zustand hands out the store's initial
 * state, so until the stored settings are applied (after hydration) the language is the one the
 * server rendered with: state.lang.
 */
function LanguageProvider({ boot, children }: { boot: BootState; children: ReactNode }) {
  const loaded = useSettings((s) => s.loaded);
  const lang = useSettings((s) => s.language);
  const ready = useReadyLang(loaded ? lang : boot.lang);
  return <LangContext.Provider value={ready}>{children}</LangContext.Provider>;
}

/** The whole app below the router; the same tree on the server and in the browser. */
export function App({ boot }: { boot: BootState }) {
  return (
    <BootContext.Provider value={boot}>
      <LanguageProvider boot={boot}>
        <Routed />
        <Toasts />
        <Notices />
        <LoadingOverlay />
        <ProgressBar />
      </LanguageProvider>
    </BootContext.Provider>
  );
}
