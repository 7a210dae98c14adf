import { useEffect } from 'react';
import { useLocation } from 'react-router';
import { useBoot, useInitialData } from '../../stores/boot';
import { useLang, useT } from '../../lib/i18n';
import { guidePdf } from '../../lib/paths';
import { Icon } from '../../components/Icon';
import { Spinner } from '../../components/placeholders';
import { ErrorPage } from '../../components/ErrorPage';

type DocumentName = 'terms-of-use' | 'privacy-policy' | 'guide';

/**
 * A written document (terms, privacy policy, user guide): the server puts its HTML in the page
 * state (`data.document`: the operator's file when there is one, else the shipped text). Reached
 * by a client-side link the page has no data: it loads itself from the server once.
 */
export function DocumentPage({ name }: { name: DocumentName }) {
  const t = useT();
  const lang = useLang();
  const boot = useBoot();
  const location = useLocation();
  const doc = useInitialData('document');
  const here = location.pathname + location.search;
  const ready = Boolean(doc && doc.name === name);
  const firstLocation = boot.url === here;
  useEffect(() => {
    if (!ready && !firstLocation) window.location.replace(here);
  }, [ready, firstLocation, here]);
  if (!ready || !doc) {
    return firstLocation ? <ErrorPage code={404} /> : (
      <div className="page-loading">
        <Spinner label={t('loading')} />
      </div>
    );
  }
  return (
    <div className={`page container narrow document document-${name}`}>
      {name === 'guide' ? (
        <p className="document-actions no-print">
          <a className="button ghost small" href={guidePdf(lang)} download>
            <Icon name="download" size={16} /> {t('guide_pdf')}
          </a>
        </p>
      ) : null}
      <article className="document-body" dangerouslySetInnerHTML={{ __html: doc.html }} />
    </div>
  );
}
