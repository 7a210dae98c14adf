import { api } from './client';
import type { Device, HostFree, ListPage } from './types';

const EBS2 = '/api/ebs/v2';

export const fetchDevices = (q: { type?: string; status?: string } = {}, signal?: AbortSignal) =>
  api.get<ListPage<Device>>(`${EBS2}/devices`, { query: q, signal });
export const fetchDevice = (id: string, signal?: AbortSignal) =>
  api.get<Device>(`${EBS2}/devices/${encodeURIComponent(id)}`, { signal });
export const linkDevice = (device_id: string, pairing_code: string) =>
  api.post<Device>(`${EBS2}/devices/link`, { device_id, pairing_code });
export const unlinkDevice = (id: string) => api.del<null>(`${EBS2}/devices/${encodeURIComponent(id)}`);
export const updateSharing = (id: string, body: { mode: Device['sharing_mode']; rentable: boolean; price_per_hour: number }) =>
  api.put<Device>(`${EBS2}/devices/${encodeURIComponent(id)}/sharing`, body);

export interface ZcloudBody {
  name: string;
  cpu_cores: number;
  memory_bytes: number;
  disk_bytes: number;
  gpu_count: number;
  gpu_model: string;
  passthrough: boolean;
}
export const createZcloud = (body: ZcloudBody) => api.post<Device>(`${EBS2}/zcloud`, body);
export const updateLocation = (id: string, body: { lat: number | null; lng: number | null }) =>
  api.put<Device>(`${EBS2}/devices/${encodeURIComponent(id)}/location`, body);
export const fetchZcloudCapacity = (signal?: AbortSignal) => api.get<HostFree[]>(`${EBS2}/zcloud/capacity`, { signal });
