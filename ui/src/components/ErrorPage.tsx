import { Link } from 'react-router';
import { useT } from '../lib/i18n';
import { paths } from '../lib/paths';

const TEXT = { 403: 'error_403', 404: 'error_404', 500: 'error_500' } as const;

/** 403 / 404 / 500 with the texts of docs/product.md §8. */
export function ErrorPage({ code }: { code: 403 | 404 | 500 }) {
  const t = useT();
  return (
    <section className="error-page center-text">
      <p className="error-code" aria-hidden="true">
        {code}
      </p>
      <h1>{t(TEXT[code])}</h1>
      <Link className="button primary" to={paths.market.home()}>
        {t('back_home')}
      </Link>
    </section>
  );
}
