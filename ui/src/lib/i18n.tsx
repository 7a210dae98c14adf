import { useCallback } from 'react';
import { translate, type Lang, type MessageKey } from '../i18n';
import { useSettings } from '../stores/settings';
import { useBoot } from '../stores/boot';

export type TFunction = (key: MessageKey, params?: Record<string, string | number>) => string;

/**
 * The interface language. On the server and during hydration zustand hands out the store's initial
 * state, so until the stored settings are applied (after hydration) the language is the one the
 * server rendered with: state.lang.
 */
export function useLang(): Lang {
  const boot = useBoot();
  const loaded = useSettings((s) => s.loaded);
  const lang = useSettings((s) => s.language);
  return loaded ? lang : boot.lang;
}

export function useT(): TFunction {
  const lang = useLang();
  return useCallback((key, params) => translate(lang, key, params), [lang]);
}

/** Outside React (toasts from async code). */
export function t(key: MessageKey, params?: Record<string, string | number>): string {
  return translate(useSettings.getState().language, key, params);
}
