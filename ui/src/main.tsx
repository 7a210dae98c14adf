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
import { start } from './app/start';
import { isLang, loadMessages } from './i18n';

// The page's language (the server's <html lang>) has its messages before hydration.
const lang = document.documentElement.lang;
loadMessages(isLang(lang) ? lang : 'en')
  .catch((err: unknown) => console.error('loading the messages', err))
  .finally(() => start());
