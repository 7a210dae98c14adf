// Client entry: hydrate the server markup (data-ssr="1") or render from scratch (data-ssr="0").
import './styles/leaflet.css';
import './styles/theme.css';
import './styles/front.css';
import './styles/content.css';
import './styles/console.css';
import './styles/mobile-and-map.css';
import './styles/overlays.css';
import './styles/responsive.css';
import './styles/companies.css';
import './styles/apps.css';
import './styles/orders.css';
import './styles/wallet.css';
import './styles/operator.css';
import './styles/operator-apps.css';
import './styles/social.css';
import '@xterm/xterm/css/xterm.css';
import './styles/connect.css';
import './styles/gpus.css';
import './styles/snapshots.css';
import { isLang, loadMessages } from './i18n';

/** Lets the browser run what waits (input, a paint) before the next step. */
const nextTask = () => new Promise<void>((ok) => setTimeout(ok, 0));

/**
 * The page's language has its messages before hydration. The app (React and the pages) is imported
 * dynamically, so its modules are evaluated in a task of their own and hydration starts in the next:
 * as one module graph with this entry, hydrating at once, they held a phone's main thread for
 * 180 ms at Lighthouse's 4x slowdown (issue 41). The app's chunks are among those the boot script
 * preloads (ui/build.mjs), so no step waits on the network.
 */
async function boot(): Promise<void> {
  const lang = document.documentElement.lang;
  await loadMessages(isLang(lang) ? lang : 'en').catch((err: unknown) => console.error('loading the messages', err));
  const { start } = await import('./app/start');
  await nextTask();
  start();
}

void boot();
