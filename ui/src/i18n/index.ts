import { en, type MessageKey } from './en';

export type Lang = 'en' | 'zh';
export type { MessageKey };

/**
 * The loaded message tables. English is in the first load; Chinese is a chunk of its own, loaded
 * before hydration for a Chinese page (and preloaded by the document) or when a person switches
 * (7 KiB gzip a visitor in the other language never downloads). The server bundle registers both.
 */
export const messages: Partial<Record<Lang, Record<MessageKey, string>>> & { en: Record<MessageKey, string> } = { en };

export function registerMessages(lang: Lang, table: Record<MessageKey, string>) {
  messages[lang] = table;
}

export function hasMessages(lang: Lang): boolean {
  return messages[lang] !== undefined;
}

/** Loads `lang`'s table once (a no-op for a loaded one). */
export async function loadMessages(lang: Lang): Promise<void> {
  if (hasMessages(lang)) return;
  if (lang === 'zh') registerMessages('zh', (await import('./zh')).zh);
}

export function isLang(value: unknown): value is Lang {
  return value === 'en' || value === 'zh';
}

/** Looks a key up in `lang`, filling `{name}` placeholders. An unknown key is returned as is. A
 * count of one (`count` or `n`) takes the key's `_one` form where the table has one ("1 core"). */
export function translate(lang: Lang, key: MessageKey | string, params?: Record<string, string | number>): string {
  const table = (messages[lang] ?? messages.en) as Record<string, string>;
  if (params && String(params.count ?? params.n) === '1' && table[`${key}_one`]) key = `${key}_one`;
  let text = table[key] ?? (messages.en as Record<string, string>)[key] ?? key;
  if (params) {
    for (const name of Object.keys(params)) {
      text = text.split(`{${name}}`).join(String(params[name]));
    }
  }
  return text;
}

/** docs/product.md §9: a browser language containing "zh" gives Chinese, otherwise English. */
export function langFromBrowser(language: string | undefined | null): Lang {
  return language && language.toLowerCase().includes('zh') ? 'zh' : 'en';
}
