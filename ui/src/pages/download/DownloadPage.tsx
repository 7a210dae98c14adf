import { fetchDownloadLinks } from '../../api/market';
import type { DownloadLinks } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useBoot } from '../../stores/boot';
import { useT } from '../../lib/i18n';
import { Icon } from '../../components/Icon';
import { ErrorNote } from '../../components/placeholders';
import { PageHeader } from '../../components/sections';
import type { MessageKey } from '../../i18n';

const PLATFORMS: { key: keyof DownloadLinks; label: MessageKey }[] = [
  { key: 'windows', label: 'download_windows' },
  { key: 'mac', label: 'download_mac' },
  { key: 'android', label: 'download_android' },
  { key: 'ios', label: 'download_ios' },
];

export function DownloadPage() {
  const t = useT();
  const boot = useBoot();
  // The server's configured links paint first; the API's current ones replace them.
  const state = useAsync<DownloadLinks>((signal) => fetchDownloadLinks(signal), []);
  const links = { ...boot.config.downloadLinks, ...(state.data ?? {}) };
  return (
    <div className="page container narrow">
      <PageHeader title={t('download_title', { product: boot.productName })} />
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      <ul className="download-grid" role="list">
        {PLATFORMS.map((p) => (
          <li key={p.key} className="card download-card">
            <Icon name="download" size={28} />
            <h2>{t(p.label)}</h2>
            {links[p.key] ? (
              <a className="button primary" href={links[p.key]} rel="noreferrer">
                {t('download')} <span className="visually-hidden">{t(p.label)}</span>
              </a>
            ) : (
              <span className="muted">{t('not_available')}</span>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
