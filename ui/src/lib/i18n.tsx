// The interface language for components: a context the app root fills (app/App.tsx), so this layer
// reads no store.
import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import { hasMessages, loadMessages, translate, type Lang, type MessageKey } from '../i18n';

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

/**
 * The language to render in when `wanted` is asked for: `wanted` once its messages are loaded,
 * the language shown before until then (a switch to Chinese loads its table first: no page of
 * keys or of English in between).
 */
export function useReadyLang(wanted: Lang): Lang {
  const [shown, setShown] = useState<Lang>(() => (hasMessages(wanted) ? wanted : 'en'));
  useEffect(() => {
    if (hasMessages(wanted)) {
      setShown(wanted);
      return;
    }
    let live = true;
    loadMessages(wanted)
      .then(() => live && setShown(wanted))
      .catch((err: unknown) => console.error('loading the messages', wanted, err));
    return () => {
      live = false;
    };
  }, [wanted]);
  return hasMessages(wanted) ? wanted : shown;
}
