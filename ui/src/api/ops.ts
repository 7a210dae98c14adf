// The operator's console (`/api/ops/v1`, docs/api.md §Operator): people, suspension, grants, audit.
import { api, fetchFile } from './client';
import type { AuditEntry, ListPage, MarketSettings, OpsCode, OpsIssuedCodes, OpsOverview, OpsUser, SettingsChange, WalletEntry } from './types';

const OPS = '/api/ops/v1';
const OPS_PAGE_SIZE = 20;

export const fetchUsers = (q: string, offset = 0, signal?: AbortSignal) =>
  api.get<ListPage<OpsUser>>(`${OPS}/users`, { query: { q: q || undefined, offset, limit: OPS_PAGE_SIZE }, signal });

export const suspendUser = (id: string, reason: string) => api.post<OpsUser>(`${OPS}/users/${encodeURIComponent(id)}/suspend`, { reason });

export const unsuspendUser = (id: string) => api.post<OpsUser>(`${OPS}/users/${encodeURIComponent(id)}/unsuspend`, {});

/** Coins (cents) into a person's wallet; the key makes a retried submission grant once. */
export const grantCoins = (id: string, amount: number, memo: string, idempotencyKey: string) =>
  api.post<WalletEntry>(`${OPS}/users/${encodeURIComponent(id)}/grant`, { amount, memo }, { idempotencyKey });

export const fetchAudit = (offset = 0, signal?: AbortSignal) =>
  api.get<ListPage<AuditEntry>>(`${OPS}/audit`, { query: { offset, limit: OPS_PAGE_SIZE }, signal });

export const fetchOverview = (signal?: AbortSignal) => api.get<OpsOverview>(`${OPS}/overview`, { signal });
/** Back up now: a copy into the backups folder, the overview's last backup from then on. */
export const backUpNow = () => api.post<NonNullable<OpsOverview['last_backup']>>(`${OPS}/backup`, {});

export const fetchMarketSettings = (signal?: AbortSignal) => api.get<MarketSettings>(`${OPS}/settings`, { signal });

export const saveMarketSettings = (change: SettingsChange) => api.put<MarketSettings>(`${OPS}/settings`, change);

/** Codes worth `amount` cents each; the key makes a retried submission issue once. */
export const issueCodes = (amount: number, count: number, expiresAt: string | null, idempotencyKey: string) =>
  api.post<OpsIssuedCodes>(`${OPS}/topup-codes`, { amount, count, expires_at: expiresAt }, { idempotencyKey });

export const fetchCodes = (state: string, offset = 0, signal?: AbortSignal) =>
  api.get<ListPage<OpsCode>>(`${OPS}/topup-codes`, { query: { state: state || undefined, offset, limit: OPS_PAGE_SIZE }, signal });

/** The list of codes (as filtered) as CSV, headed in the reader's language. */
export function fetchCodesCsv(state: string): Promise<Blob> {
  const query = state ? `?state=${encodeURIComponent(state)}` : '';
  return fetchFile(`${OPS}/topup-codes.csv${query}`);
}
