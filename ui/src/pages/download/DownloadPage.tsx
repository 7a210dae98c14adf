import { Link } from 'react-router';
import { fetchDownloadLinks } from '../../api/market';
import type { DownloadLinks } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { Icon } from '../../components/Icon';
import { EmptyState, ErrorNote } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import { paths } from '../../lib/paths';
import type { MessageKey } from '../../i18n';

type Platform = { key: keyof DownloadLinks; label: MessageKey; phone: boolean };

const PLATFORMS: Platform[] = [
  { key: 'windows', label: 'download_windows', phone: false },
  { key: 'mac', label: 'download_mac', phone: false },
  { key: 'android', label: 'download_android', phone: true },
  { key: 'ios', label: 'download_ios', phone: true },
];

/**
 * /m/download (in the mobile layout): only the platforms the operator configured a link for. On a
 * phone, desktop installers are named but not offered (they cannot run there); with no link at
 * all the page says so, and points to what works in the browser.
 */
export function DownloadPage() {
  const t = useT();
  const boot = useBoot();
  // The server's configured links paint first; the API's current ones replace them.
  const state = useAsync<DownloadLinks>((signal) => fetchDownloadLinks(signal), []);
  const links = { ...boot.config.downloadLinks, ...(state.data ?? {}) };
  const configured = PLATFORMS.filter((p) => Boolean(links[p.key]));
  const offered = configured.filter((p) => p.phone || !boot.isMobile);
  const desktopOnly = configured.filter((p) => !p.phone && boot.isMobile);
  return (
    <div className="page container narrow">
      <PageHeader title={t('download_title', { product: boot.productName })} />
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {configured.length === 0 ? (
        <EmptyState level={2} icon="download" title={t('download_none')} text={t(boot.isMobile ? 'download_none_hint_phone' : 'download_none_hint', { product: boot.productName })} />
      ) : (
        <ul className="download-grid" role="list">
          {offered.map((p) => (
            <li key={p.key} className="card download-card">
              <Icon name="download" size={28} />
              <h2>{t(p.label)}</h2>
              <a className="button primary" href={links[p.key]} rel="noreferrer">
                {t('download')} <span className="visually-hidden">{t(p.label)}</span>
              </a>
            </li>
          ))}
        </ul>
      )}
      {boot.isMobile ? (
        <section className="card download-card" data-home-screen>
          <Icon name="download" size={28} />
          <h2>{t('home_screen')}</h2>
          <ul className="muted">
            <li>{t('home_screen_ios')}</li>
            <li>{t('home_screen_android')}</li>
          </ul>
        </section>
      ) : null}
      {desktopOnly.length ? (
        <p className="muted">{t('download_on_computer', { platforms: desktopOnly.map((p) => t(p.label)).join(', ') })}</p>
      ) : null}
      <p className="download-guide">
        <Link to={paths.mobile.guide()} className="button ghost" reloadDocument>
          <Icon name="list" size={16} /> {t('guide_read')}
        </Link>
      </p>
    </div>
  );
}
