// The HTTP client of docs/product.md §7, §8: the `{code, data, msg}` envelope, the time-out, errors and the
// offline page. What it needs from the session (tokens, the 401 handling) and the settings (the
// language) is handed in by api/client.ts, so this layer imports no store.
import { REQUEST_TIMEOUT_MS, SUCCESS_CODE } from '../constants';
import { translate, type Lang } from '../i18n';
import { navigateTo } from './navigation';
import { paths } from './paths';

interface Envelope<T> {
  code: number;
  data: T;
  msg: string;
  /** A refusal's stable name (`stale_edit`, …). */
  error?: string;
}

type ApiErrorKind = 'api' | 'http' | 'timeout' | 'network' | 'unauthorized' | 'aborted';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly kind: ApiErrorKind,
    readonly code: number,
    readonly data: unknown = null,
    /** The refusal's stable name, when the server gave one. */
    readonly error: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined | null>;
  /** JSON body, or FormData for multipart uploads. */
  body?: unknown;
  /** Which token goes in Authorization: the access token (default), the refresh token, or none. */
  auth?: 'access' | 'refresh' | 'none';
  /** A token to send instead of the session's (a session not yet stored, e.g. from a /pc-web link). */
  bearer?: string;
  /** Caller's abort signal (e.g. a page unmounting). */
  signal?: AbortSignal;
  /** Do not run the 401 handling (the sign-in call answers 401 for wrong credentials). */
  skipUnauthorized?: boolean;
  /** Sent as If-None-Match: a 304 answer then resolves with `undefined` and `meta.notModified`. */
  ifNoneMatch?: string;
  /** Sent as Idempotency-Key on calls that move coins: a retry with the same key moves nothing. */
  idempotencyKey?: string;
  /** Filled with what the response said besides its data. */
  meta?: ResponseMeta;
}

/** What a response said besides its data (see `RequestOptions.meta`). */
export interface ResponseMeta {
  etag?: string | null;
  notModified?: boolean;
}

/** What the client asks of the app on every request. */
interface ClientHooks {
  /** Accept-Language, and the language of the client's own messages. */
  language(): Lang;
  /** The token a request sends (empty: none). */
  token(kind: 'access' | 'refresh'): string;
  /** A 401 answer (docs/product.md §8). */
  unauthorized(): void;
  /** Any other refusal, by its stable name (before it is thrown to the caller). */
  refused?(error: string | null): void;
}

function buildQuery(query: RequestOptions['query']): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const key of Object.keys(query)) {
    const v = query[key];
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

function isOffline() {
  return typeof navigator !== 'undefined' && navigator.onLine === false;
}

export function createClient(hooks: ClientHooks) {
  async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const lang = hooks.language();
    const headers: Record<string, string> = { Accept: 'application/json', 'Accept-Language': lang };
    const auth = opts.auth ?? 'access';
    const bearer = opts.bearer ?? (auth === 'none' ? '' : hooks.token(auth));
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    if (opts.ifNoneMatch) headers['If-None-Match'] = opts.ifNoneMatch;
    if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
    let body: BodyInit | undefined;
    if (opts.body instanceof FormData) body = opts.body;
    else if (opts.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }

    if (isOffline()) {
      navigateTo(paths.errors.offline());
      throw new ApiError(translate(lang, 'network_error'), 'network', 0);
    }

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, REQUEST_TIMEOUT_MS);
    const onCallerAbort = () => controller.abort();
    opts.signal?.addEventListener('abort', onCallerAbort);

    let response: Response;
    try {
      response = await fetch(path + buildQuery(opts.query), {
        method,
        headers,
        body,
        credentials: 'include',
        signal: controller.signal,
      });
    } catch (err) {
      if (timedOut) throw new ApiError(translate(hooks.language(), 'request_timeout'), 'timeout', 0);
      if (opts.signal?.aborted) throw new ApiError('request aborted', 'aborted', 0);
      if (isOffline()) navigateTo(paths.errors.offline());
      throw new ApiError(translate(hooks.language(), 'network_error'), 'network', 0, String(err));
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onCallerAbort);
    }

    if (opts.meta) {
      opts.meta.etag = response.headers.get('ETag');
      opts.meta.notModified = response.status === 304;
    }
    if (response.status === 304 && opts.ifNoneMatch) return undefined as T;

    let envelope: Envelope<T> | null = null;
    try {
      envelope = (await response.json()) as Envelope<T>;
    } catch {
      envelope = null;
    }

    const code = envelope && typeof envelope.code === 'number' ? envelope.code : response.status;
    if (response.status === 401 || code === 401) {
      const msg = envelope?.msg || translate(hooks.language(), 'session_expired');
      if (!opts.skipUnauthorized) hooks.unauthorized();
      throw new ApiError(msg, 'unauthorized', 401, envelope?.data ?? null, envelope?.error ?? null);
    }
    if (!response.ok || !envelope || code !== SUCCESS_CODE) {
      const msg = envelope?.msg || translate(hooks.language(), 'request_failed', { status: response.status });
      hooks.refused?.(envelope?.error ?? null);
      throw new ApiError(msg, response.ok ? 'api' : 'http', code, envelope?.data ?? null, envelope?.error ?? null);
    }
    return envelope.data;
  }

  return {
    get: <T>(path: string, opts?: RequestOptions) => request<T>('GET', path, opts),
    post: <T>(path: string, body?: unknown, opts?: RequestOptions) => request<T>('POST', path, { ...opts, body }),
    put: <T>(path: string, body?: unknown, opts?: RequestOptions) => request<T>('PUT', path, { ...opts, body }),
    del: <T>(path: string, body?: unknown, opts?: RequestOptions) => request<T>('DELETE', path, { ...opts, body }),
  };
}

/** Human text for any thrown value. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
