// Snapshots (issue 40, docs/data.md): an installation's snapshots and daily backup, every snapshot
// of the caller's context (the data of ended rentals among them), keep on the market, restore,
// download, delete.
import { api } from './client';
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
/** A link the browser downloads the archive (.tar.zst) with, straight to disk (half an hour; a
 * refusal, 409 `snapshot_not_on_market`, throws the server's message). */
export const snapshotDownloadLink = (id: string) => api.post<{ url: string; expires_at: string }>(`${one(id)}/download-link`);
