import { useLang, useT } from '../lib/i18n';
import { useSettings } from '../stores/settings';

export function LanguageSwitcher() {
  const lang = useLang();
  const setLanguage = useSettings((s) => s.setLanguage);
  const t = useT();
  return (
    <div className="segmented" role="group" aria-label={t('language')}>
      <button type="button" lang="en" aria-pressed={lang === 'en'} onClick={() => setLanguage('en')}>
        EN
        <span className="visually-hidden"> {t('lang_en')}</span>
      </button>
      <button type="button" lang="zh" aria-pressed={lang === 'zh'} onClick={() => setLanguage('zh')}>
        中文
      </button>
    </div>
  );
}
