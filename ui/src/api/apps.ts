// Apps on devices (docs/api.md §Apps on devices): installations, actions, the install dialog's device fit, AI compute.
import { api } from './client';
import type { Installation, ListPage } from './types';
import type { GpuAiCompute, GpuInstallation, OfferFit } from './gpus';

const RMP = '/api/rmp/v1';

export const fetchInstallations = (q: { status?: string; offset?: number; limit?: number } = {}, signal?: AbortSignal) =>
  api.get<ListPage<Installation>>(`${RMP}/apps`, { query: q, signal });
export const fetchInstallation = (id: string, signal?: AbortSignal) =>
  api.get<GpuInstallation>(`${RMP}/apps/${encodeURIComponent(id)}`, { signal });
export const installApp = (app_id: string, device_id: string) => api.post<Installation>(`${RMP}/apps/install`, { app_id, device_id });
export const appAction = (id: string, action: string) =>
  api.post<Installation>(`${RMP}/apps/${encodeURIComponent(id)}/actions`, { action });
export const fetchDeviceFit = (app_id: string, signal?: AbortSignal) =>
  api.get<OfferFit[]>(`${RMP}/apps/fit`, { query: { app_id }, signal });
export const fetchDeviceApps = (device_id: string, signal?: AbortSignal) =>
  api.get<ListPage<Installation>>(`${RMP}/devices/${encodeURIComponent(device_id)}/apps`, { signal });
export const fetchAiCompute = (signal?: AbortSignal) => api.get<ListPage<GpuAiCompute>>(`${RMP}/aicompute`, { signal });
/** Rents the offer `device_id` at the price the person was shown (409 when it changed since). */
export const rentApp = (app_id: string, device_id: string, hours: number, price_per_hour: number) =>
  api.post<Installation>(`${RMP}/apps/rent`, { app_id, device_id, hours, price_per_hour });
/** The Rent dialog's offers, sorted and filtered as asked (pages/market/offers.ts builds `query`). */
export const fetchRentOptions = (app_id: string, query: Record<string, string | number>, signal?: AbortSignal) =>
  api.get<OfferFit[]>(`${RMP}/apps/rent-options`, { query: { app_id, ...query }, signal });
/** Extends a rental under way by `hours`: its hold grows by price × hours (409 when the wallet cannot hold it). */
export const extendRental = (id: string, hours: number, idempotencyKey: string) =>
  api.post<Installation>(`${RMP}/apps/${encodeURIComponent(id)}/extend`, { hours }, { idempotencyKey });
