import { useLocation, useNavigate } from 'react-router';
import type { Lang } from '../i18n';
import { useLang, useT } from '../lib/i18n';
import { useSettings } from '../stores/settings';

/** The URL without its `language` query value (it would switch back on the next reload). */
export function withoutLanguageQuery(search: string): string {
  const q = new URLSearchParams(search);
  if (!q.has('language')) return search;
  q.delete('language');
  const rest = q.toString();
  return rest ? `?${rest}` : '';
}

export function LanguageSwitcher() {
  const lang = useLang();
  const setLanguage = useSettings((s) => s.setLanguage);
  const t = useT();
  const location = useLocation();
  const navigate = useNavigate();
  const choose = (next: Lang) => {
    setLanguage(next);
    const search = withoutLanguageQuery(location.search);
    if (search !== location.search) navigate({ pathname: location.pathname, search, hash: location.hash }, { replace: true });
  };
  return (
    <div className="segmented" role="group" aria-label={t('language')}>
      <button type="button" lang="en" aria-pressed={lang === 'en'} onClick={() => choose('en')}>
        EN
        <span className="visually-hidden"> {t('lang_en')}</span>
      </button>
      <button type="button" lang="zh" aria-pressed={lang === 'zh'} onClick={() => choose('zh')}>
        中文
      </button>
    </div>
  );
}
