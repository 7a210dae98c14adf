// Demands and orders (docs/api.md §Demands and orders): posting, the board, the live count, the check of
// one's devices, taking, and the demander's confirm / finish / cancel.
import { api } from './client';
import type { DemandBody, DeviceCheck, ListPage, Order } from './types';

const RMP = '/api/rmp/v1';
type Point = { lat: number; lng: number } | null;

export const postDemand = (body: DemandBody) => api.post<Order>(`${RMP}/demands`, body);
export const fetchBoard = (at: Point, signal?: AbortSignal) =>
  api.get<ListPage<Order>>(`${RMP}/demands`, { query: { limit: 50, lat: at?.lat, lng: at?.lng }, signal });
export const fetchQualifying = (q: Omit<DemandBody, 'name' | 'hours' | 'price_per_hour'>, signal?: AbortSignal) =>
  api.get<{ count: number }>(`${RMP}/demands/qualifying`, {
    query: {
      app_id: q.app_id,
      gpu_count: q.gpu_count,
      gpu_models: q.gpu_models,
      distance_km: q.distance_km ?? undefined,
      lat: q.lat ?? undefined,
      lng: q.lng ?? undefined,
      min_cuda: q.min_cuda ?? undefined,
      min_vram: q.min_vram ?? undefined,
    },
    signal,
  });
export const fetchMyDeviceChecks = (id: string, signal?: AbortSignal) =>
  api.get<DeviceCheck[]>(`${RMP}/demands/${encodeURIComponent(id)}/devices`, { signal });
export const takeDemand = (id: string, device_id: string) => api.post<Order>(`${RMP}/demands/${encodeURIComponent(id)}/take`, { device_id });
export const fetchOrders = (role: 'demander' | 'provider', signal?: AbortSignal) =>
  api.get<ListPage<Order>>(`${RMP}/orders`, { query: { role, limit: 50 }, signal });
export const orderAction = (id: string, action: 'confirm' | 'finish' | 'cancel') =>
  api.post<Order>(`${RMP}/orders/${encodeURIComponent(id)}/${action}`, {});
