// The interface language for components: a context the app root fills (app/App.tsx), so this layer
// reads no store.
import { createContext, useCallback, useContext } from 'react';
import { translate, type Lang, type MessageKey } from '../i18n';

export type TFunction = (key: MessageKey, params?: Record<string, string | number>) => string;

/**
 * The language the tree renders in. On the server and during hydration it is the one the server
 * rendered with (state.lang); after hydration, the stored setting.
 */
export const LangContext = createContext<Lang>('en');

export function useLang(): Lang {
  return useContext(LangContext);
}

export function useT(): TFunction {
  const lang = useLang();
  return useCallback((key, params) => translate(lang, key, params), [lang]);
}
