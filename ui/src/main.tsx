// Client entry: hydrate the server markup (data-ssr="1") or render from scratch (data-ssr="0").
import './styles/leaflet.css';
import './styles/app.css';
import { start } from './app/start';

start();
