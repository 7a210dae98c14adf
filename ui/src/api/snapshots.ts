// Snapshots (issue 40, docs/data.md): an installation's snapshots and daily backup, every snapshot
// of the caller's context (the data of ended rentals among them), keep on the market, restore,
// download, delete.
import { translate } from '../i18n';
import { ApiError } from '../lib/http';
import { useSettings } from '../stores/settings';
import { currentSession } from '../stores/session';
import { api, handleUnauthorized } from './client';
import type { BackupSchedule, Installation, InstallationSnapshots, ListPage, Snapshot } from './types';

const RMP = '/api/rmp/v1';
const one = (id: string) => `${RMP}/snapshots/${encodeURIComponent(id)}`;

export const fetchInstallationSnapshots = (installationId: string, signal?: AbortSignal) =>
  api.get<InstallationSnapshots>(`${RMP}/apps/${encodeURIComponent(installationId)}/snapshots`, { signal });
export const fetchSnapshots = (q: { offset?: number; limit?: number } = {}, signal?: AbortSignal) =>
  api.get<ListPage<Snapshot>>(`${RMP}/snapshots`, { query: q, signal });
/** Copies the snapshot from its box to the market (413 over the person's limit, 409 box offline). */
export const keepOnMarket = (id: string) => api.post<Snapshot>(`${one(id)}/upload`);
/** A new installation from the snapshot on `device_id` (409 with `data.gaps` when it does not fit);
 * a retry with the same Idempotency-Key restores once. */
export const restoreSnapshot = (id: string, device_id: string, idempotencyKey: string) =>
  api.post<Installation>(`${one(id)}/restore`, { device_id }, { idempotencyKey });
export const deleteSnapshot = (id: string) => api.del<Record<string, never>>(one(id));
export const saveBackups = (installationId: string, schedule: BackupSchedule) =>
  api.put<BackupSchedule>(`${RMP}/apps/${encodeURIComponent(installationId)}/backups`, schedule);
/** The archive (.tar.zst) with its file name; a refusal (409 `snapshot_not_on_market`) throws the
 * server's message. */
export const downloadSnapshot = (id: string) => fileResponse(`${one(id)}/download`);

/**
 * A file the API answers and the name its Content-Disposition gives (null without one), fetched
 * with the session's token in the reader's language. A refusal throws an ApiError with the
 * server's message (a 401 is handled as for every call).
 */
async function fileResponse(path: string): Promise<{ blob: Blob; name: string | null }> {
  const lang = useSettings.getState().language;
  let response: Response;
  try {
    response = await fetch(path, { headers: { Authorization: `Bearer ${currentSession().token}`, 'Accept-Language': lang } });
  } catch (err) {
    throw new ApiError(translate(lang, 'network_error'), 'network', 0, String(err));
  }
  if (!response.ok) {
    let envelope: { msg?: string; data?: unknown; error?: string } | null = null;
    try {
      envelope = await response.json();
    } catch {
      envelope = null;
    }
    if (response.status === 401) handleUnauthorized();
    const msg = envelope?.msg || translate(lang, 'request_failed', { status: response.status });
    throw new ApiError(msg, 'http', response.status, envelope?.data ?? null, envelope?.error ?? null);
  }
  return { blob: await response.blob(), name: dispositionName(response.headers.get('Content-Disposition')) };
}

/** The file name of a Content-Disposition header (`filename*=UTF-8''…` first, then `filename=`). */
export function dispositionName(header: string | null): string | null {
  if (!header) return null;
  const star = header.match(/filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      // A malformed escape: fall back to the plain name.
    }
  }
  const plain = header.match(/filename\s*=\s*("([^"]*)"|[^;]+)/);
  return plain ? (plain[2] ?? plain[1]).trim() || null : null;
}
