import { en, type MessageKey } from './en';
import { zh } from './zh';

export type Lang = 'en' | 'zh';
export type { MessageKey };

export const messages: Record<Lang, Record<MessageKey, string>> = { en, zh };

export function isLang(value: unknown): value is Lang {
  return value === 'en' || value === 'zh';
}

/** Looks a key up in `lang`, filling `{name}` placeholders. An unknown key is returned as is. */
export function translate(lang: Lang, key: MessageKey | string, params?: Record<string, string | number>): string {
  const table = messages[lang] as Record<string, string>;
  let text = table[key] ?? (messages.en as Record<string, string>)[key] ?? key;
  if (params) {
    for (const name of Object.keys(params)) {
      text = text.split(`{${name}}`).join(String(params[name]));
    }
  }
  return text;
}

/** SPEC.md §9: a browser language containing "zh" gives Chinese, otherwise English. */
export function langFromBrowser(language: string | undefined | null): Lang {
  return language && language.toLowerCase().includes('zh') ? 'zh' : 'en';
}
