import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, errorText } from '../lib/http';
import { useLang } from './i18n';

export interface AsyncState<T> {
  data: T | undefined;
  error: string | null;
  /** The API's code of the last failure (404 when the thing asked for does not exist). */
  errorCode: number | null;
  loading: boolean;
  reload: () => void;
  /** Loads again in the background: what is shown stays until the new data arrives (live updates). */
  refresh: () => void;
  setData: (update: (prev: T | undefined) => T | undefined) => void;
}

/**
 * Loads data after mount (never during render, so the server and the first client render agree).
 * With `initial` (server data for the first location) the first load is skipped. A change of the
 * page language loads again.
 */
export function useAsync<T>(
  load: ((signal: AbortSignal) => Promise<T>) | null,
  deps: unknown[],
  initial?: T,
): AsyncState<T> {
  const [data, setDataState] = useState<T | undefined>(initial);
  const [error, setError] = useState<string | null>(null);
  const [errorCode, setErrorCode] = useState<number | null>(null);
  const [loading, setLoading] = useState<boolean>(initial === undefined && load !== null);
  const [nonce, setNonce] = useState(0);
  const skip = useRef(initial !== undefined);
  const quiet = useRef(false);
  const hasData = useRef(initial !== undefined);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    if (skip.current) {
      skip.current = false;
      return;
    }
    const fn = loadRef.current;
    if (!fn) {
      setLoading(false);
      return;
    }
    const controller = new AbortController();
    const background = quiet.current && hasData.current;
    quiet.current = false;
    if (!background) {
      setLoading(true);
      setError(null);
      setErrorCode(null);
    }
    fn(controller.signal)
      .then((d) => {
        if (!controller.signal.aborted) {
          hasData.current = true;
          setDataState(d);
          setError(null);
          setErrorCode(null);
          setLoading(false);
        }
      })
      .catch((err) => {
        // A failed background load keeps what is shown; the next one may succeed.
        if (controller.signal.aborted || background) return;
        setError(errorText(err));
        setErrorCode(err instanceof ApiError ? err.code : null);
        setLoading(false);
      });
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, nonce]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  const refresh = useCallback(() => {
    quiet.current = true;
    setNonce((n) => n + 1);
  }, []);
  const setData = useCallback((update: (prev: T | undefined) => T | undefined) => setDataState(update), []);

  // The server writes names and texts in the request's language: a language change loads again,
  // in the background (issue 26: /app kept the old language's names until a reload).
  const lang = useLang();
  const shownLang = useRef(lang);
  useEffect(() => {
    if (lang === shownLang.current) return;
    shownLang.current = lang;
    if (loadRef.current) refresh();
  }, [lang, refresh]);
  return { data, error, errorCode, loading, reload, refresh, setData };
}
