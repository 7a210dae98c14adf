import { WALLET_PAGE_SIZE } from '../constants';
import { api, fetchFile } from './client';
import type { Bill, BillStatus, EntryKind, ListPage, TopUpInfo, Wallet, WalletDay, WalletEntry } from './types';

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

/** How coins are had on this market (the operator's words, in the reader's language). */
export const fetchTopUpInfo = (signal?: AbortSignal) => api.get<TopUpInfo>(`${BILLING}/wallet/top-up-info`, { signal });

/** Redeems a top-up code into the wallet of the current context; answers the wallet. */
export const redeemCode = (code: string, idempotencyKey: string) => api.post<Wallet>(`${BILLING}/wallet/redeem`, { code }, { idempotencyKey });

/** Funds the company's wallet (an administrator in the company context) from the administrator's own
 * wallet with `amount` cents; answers the company's income entry. */
/** `code`: a current two-factor code, asked above the market's threshold (`two_factor_step_up`). */
export const fundCompany = (amount: number, idempotencyKey: string, code?: string) =>
  api.post<WalletEntry>(`${BILLING}/wallet/fund`, { amount, ...(code ? { code } : {}) }, { idempotencyKey });

/** The entries (`kind`) or bills (`status`) as CSV, UTF-8 with a byte-order mark. */
export function fetchCsv(what: 'entries' | 'bills', filter: string | null): Promise<Blob> {
  const path = what === 'entries' ? `${BILLING}/wallet/entries.csv` : `${BILLING}/bills.csv`;
  const query = filter ? `?${what === 'entries' ? 'kind' : 'status'}=${encodeURIComponent(filter)}` : '';
  return fetchFile(path + query);
}
