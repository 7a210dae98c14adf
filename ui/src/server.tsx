// Server entry, run inside the binary (QuickJS): globalThis.zmarketRender(url, stateJson) -> JSON string.
// Must not touch window/document/localStorage at module scope or during render.
import './server/polyfills';
import { ServerRouter } from './server/router';
import { renderToString } from 'react-dom/server';
import { App } from './app/App';
import { normalizeBootState, resetFirstLocation } from './stores/boot';
import { pageHandle, titleFromHandle } from './app/routes';
import { defaultSettings, useSettings } from './stores/settings';
import { emptySession, useSession } from './stores/session';
import { useFeedback } from './stores/feedback';
import { resetNotifications } from './stores/notifications';
import { registerMessages } from './i18n';
import { zh } from './i18n/zh';
import { FragmentsContext, FragmentStore } from './lib/fragments';

// Every page is rendered in either language: both tables, at once.
registerMessages('zh', zh);

/** The cards rendered by earlier renders of this runtime (lib/fragments.tsx). */
const fragments = new FragmentStore();

interface RenderResult {
  html: string;
  status: 200 | 404;
  title: string;
}

function pathnameOf(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/**
 * Renders one page. Stores are module-level and the engine renders one page at a time, so each
 * render first resets them to what the first client render will see (defaults + state.lang).
 */
export function render(url: string, stateJson: string): RenderResult {
  const boot = normalizeBootState(JSON.parse(stateJson || '{}'));
  useSettings.setState({ ...defaultSettings, language: boot.lang, loaded: false });
  useSession.setState({ ...emptySession, loaded: false, menu: null, menuStatus: 'idle' });
  useFeedback.setState({ toasts: [], notices: [], loadingCount: 0, loadingVisible: false, progress: null });
  resetNotifications();
  resetFirstLocation();
  const location = url || boot.url || '/';
  fragments.begin();
  const html = fragments.finish(
    renderToString(
      <ServerRouter location={location}>
        <FragmentsContext.Provider value={fragments}>
          <App boot={boot} />
        </FragmentsContext.Provider>
      </ServerRouter>,
    ),
  );
  // A known page whose subject does not exist (data.notFound) renders the 404 page and answers 404.
  const handle = pageHandle(pathnameOf(location), null, boot.data.notFound === true);
  return { html, status: handle.notFound ? 404 : 200, title: titleFromHandle(handle, boot.lang, boot.productName) };
}

(globalThis as Record<string, unknown>).zmarketRender = (url: string, stateJson: string): string =>
  JSON.stringify(render(url, stateJson));
