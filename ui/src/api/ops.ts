// The operator's console (`/api/ops/v1`, docs/api.md §Operator): people, suspension, grants, audit.
import { api } from './client';
import type { AuditEntry, ListPage, OpsUser, WalletEntry } from './types';

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
