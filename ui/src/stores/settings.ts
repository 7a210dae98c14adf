import { create } from 'zustand';
import { DEFAULT_THEME_COLOR, LANG_COOKIE, LANG_COOKIE_MAX_AGE_S } from '../constants';
import { isLang, langFromBrowser, translate, type Lang, type MessageKey } from '../i18n';
import { readJson, storageSet } from '../lib/storage';

/** docs/product.md §3 global settings, persisted in localStorage under SETTINGS_KEY. */
export interface Settings {
  layout: 'vertical' | 'horizontal';
  language: Lang;
  themeColor: string;
  dark: boolean;
  grey: boolean;
  weak: boolean;
  collapse: boolean;
  tabs: boolean;
  isPCMode: boolean;
  deviceType: 'desktop' | 'mobile';
  downloadUrls: { windows: string; mac: string; android: string; ios: string };
}

export const SETTINGS_KEY = 'zm_settings';

export const defaultSettings: Settings = {
  layout: 'vertical',
  language: 'en',
  themeColor: DEFAULT_THEME_COLOR,
  dark: true,
  grey: false,
  weak: false,
  collapse: false,
  tabs: false,
  isPCMode: false,
  deviceType: 'desktop',
  downloadUrls: { windows: '', mac: '', android: '', ios: '' },
};

interface SettingsState extends Settings {
  /** Whether the stored preferences were applied (client, after hydration). */
  loaded: boolean;
  set: (patch: Partial<Settings>) => void;
  setLanguage: (lang: Lang) => void;
  reset: () => void;
}

function writeLangCookie(lang: Lang) {
  if (typeof document === 'undefined') return;
  document.cookie = `${LANG_COOKIE}=${lang}; path=/; max-age=${LANG_COOKIE_MAX_AGE_S}; SameSite=Lax`;
}

function persist(state: Settings) {
  const { layout, language, themeColor, dark, grey, weak, collapse, tabs, isPCMode, deviceType, downloadUrls } = state;
  storageSet(
    SETTINGS_KEY,
    JSON.stringify({ layout, language, themeColor, dark, grey, weak, collapse, tabs, isPCMode, deviceType, downloadUrls }),
  );
}

/**
 * Starts from defaults (the server and the first client render see the same values); the stored
 * preferences are applied by loadStoredSettings() in an effect after hydration.
 */
export const useSettings = create<SettingsState>()((set, get) => ({
  ...defaultSettings,
  loaded: false,
  set: (patch) => {
    const before = get().language;
    set(patch);
    persist(get());
    if (patch.language && patch.language !== before) writeLangCookie(patch.language);
  },
  setLanguage: (lang) => {
    set({ language: lang });
    persist(get());
    writeLangCookie(lang);
  },
  reset: () => {
    const { language, isPCMode, downloadUrls } = get();
    set({ ...defaultSettings, language, isPCMode, downloadUrls });
    persist(get());
  },
}));

function readStoredSettings(): Partial<Settings> | null {
  return readJson<Partial<Settings>>(SETTINGS_KEY);
}

/**
 * docs/product.md §2/§9 language choice: `?language=zh|en` first, then the stored setting, then the browser's.
 */
export function resolveLanguage(query: string | null, stored: unknown, browser: string | null | undefined): Lang {
  if (isLang(query)) return query;
  if (isLang(stored)) return stored;
  return langFromBrowser(browser);
}

/** Called once after hydration: applies stored settings and the language rule, and mirrors the cookie. */
export function loadStoredSettings(search: string, browserLanguage: string | undefined) {
  const stored = readStoredSettings() ?? {};
  const params = new URLSearchParams(search);
  const language = resolveLanguage(params.get('language'), stored.language, browserLanguage);
  useSettings.setState({ ...defaultSettings, ...sanitize(stored), language, loaded: true });
  persist(useSettings.getState());
  writeLangCookie(language);
}

function sanitize(stored: Partial<Settings>): Partial<Settings> {
  const out: Partial<Settings> = {};
  if (stored.layout === 'vertical' || stored.layout === 'horizontal') out.layout = stored.layout;
  if (typeof stored.themeColor === 'string' && /^#[0-9a-fA-F]{6}$/.test(stored.themeColor)) out.themeColor = stored.themeColor;
  for (const key of ['dark', 'grey', 'weak', 'collapse', 'tabs', 'isPCMode'] as const) {
    if (typeof stored[key] === 'boolean') out[key] = stored[key];
  }
  if (stored.deviceType === 'desktop' || stored.deviceType === 'mobile') out.deviceType = stored.deviceType;
  if (stored.downloadUrls && typeof stored.downloadUrls === 'object') out.downloadUrls = { ...defaultSettings.downloadUrls, ...stored.downloadUrls };
  return out;
}

/** Translation outside React (toasts from async code), in the current language setting. */
export function t(key: MessageKey, params?: Record<string, string | number>): string {
  return translate(useSettings.getState().language, key, params);
}
