import { WALLET_PAGE_SIZE } from '../constants';
import { api } from './client';
import type { Bill, BillStatus, EntryKind, ListPage, Wallet, WalletDay, WalletEntry } from './types';

const BILLING = '/api/billing/v1';

export const fetchWallet = (signal?: AbortSignal) => api.get<Wallet>(`${BILLING}/wallet`, { signal });

export const fetchEntries = (kind: EntryKind | null, offset = 0, signal?: AbortSignal) =>
  api.get<ListPage<WalletEntry>>(`${BILLING}/wallet/entries`, {
    query: { kind: kind ?? undefined, offset, limit: WALLET_PAGE_SIZE },
    signal,
  });

export const fetchDaily = (days: number, signal?: AbortSignal) =>
  api.get<WalletDay[]>(`${BILLING}/wallet/daily`, { query: { days }, signal });

export const fetchBills = (status: BillStatus, offset = 0, signal?: AbortSignal) =>
  api.get<ListPage<Bill>>(`${BILLING}/bills`, { query: { status, offset, limit: WALLET_PAGE_SIZE }, signal });
