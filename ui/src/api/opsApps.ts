// Publishing apps from the operator's console (`/api/ops/v1/apps`, docs/api.md §Operator).
import { SUCCESS_CODE } from '../constants';
import { ApiError } from '../lib/http';
import { translate } from '../i18n';
import { useSettings } from '../stores/settings';
import { currentSession } from '../stores/session';
import { api } from './client';
import type { ImageUpload, ListPage, OpsApp, OpsAppRequest } from './types';

const APPS = '/api/ops/v1/apps';

/** Every app, hidden ones too; `listed` keeps the shown (true) or hidden (false) ones. */
export const fetchOpsApps = (q: string, listed: boolean | undefined, signal?: AbortSignal) =>
  api.get<ListPage<OpsApp>>(APPS, { query: { q: q || undefined, listed }, signal });

export const fetchOpsApp = (id: string, signal?: AbortSignal) => api.get<OpsApp>(`${APPS}/${encodeURIComponent(id)}`, { signal });

export const createApp = (body: OpsAppRequest) => api.post<OpsApp>(APPS, body);

/** The fields given change, the others stay. */
export const updateApp = (id: string, body: OpsAppRequest) => api.put<OpsApp>(`${APPS}/${encodeURIComponent(id)}`, body);

export function uploadIcon(id: string, file: File) {
  const form = new FormData();
  form.append('file', file);
  return api.post<OpsApp>(`${APPS}/${encodeURIComponent(id)}/icon`, form);
}

/**
 * A `docker save` archive, with the share sent so far (0-1) reported as it goes: an XMLHttpRequest,
 * since fetch reports no upload progress, and no time limit (archives are large).
 */
export function uploadImage(id: string, file: File, onProgress: (share: number) => void): Promise<ImageUpload> {
  const lang = useSettings.getState().language;
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${APPS}/${encodeURIComponent(id)}/image`);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Accept-Language', lang);
    const token = currentSession().token;
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(translate(lang, 'network_error'), 'network', 0));
    xhr.onload = () => {
      let envelope: { code?: number; msg?: string; data?: unknown } | null = null;
      try {
        envelope = JSON.parse(xhr.responseText);
      } catch {
        envelope = null;
      }
      if (xhr.status === 200 && envelope?.code === SUCCESS_CODE) resolve(envelope.data as ImageUpload);
      else {
        const msg = envelope?.msg || translate(lang, 'request_failed', { status: xhr.status });
        reject(new ApiError(msg, xhr.status >= 400 ? 'http' : 'api', envelope?.code ?? xhr.status, envelope?.data ?? null));
      }
    };
    const form = new FormData();
    form.append('file', file);
    xhr.send(form);
  });
}
