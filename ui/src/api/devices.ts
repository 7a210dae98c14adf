import { api } from './client';
import type { Device, HostFree, PendingDevice, ListPage, LocationBody, SharingBody, ZcloudBody, ZcloudRental } from './types';

const EBS2 = '/api/ebs/v2';

export const fetchDevices = (q: { type?: string; status?: string } = {}, signal?: AbortSignal) =>
  api.get<ListPage<Device>>(`${EBS2}/devices`, { query: q, signal });
export const fetchDevice = (id: string, signal?: AbortSignal) =>
  api.get<Device>(`${EBS2}/devices/${encodeURIComponent(id)}`, { signal });
export const linkDevice = (device_id: string, pairing_code: string) =>
  api.post<Device>(`${EBS2}/devices/link`, { device_id, pairing_code });
/** The box that registered with this pairing code (the bind page's install line); null until then. */
export const fetchPendingDevice = (pairing_code: string, signal?: AbortSignal) =>
  api.get<PendingDevice | null>(`${EBS2}/devices/pending`, { query: { pairing_code }, signal });
export const unlinkDevice = (id: string) => api.del<null>(`${EBS2}/devices/${encodeURIComponent(id)}`);
export const updateSharing = (id: string, body: SharingBody) =>
  api.put<Device>(`${EBS2}/devices/${encodeURIComponent(id)}/sharing`, body);

export const createZcloud = (body: ZcloudBody) => api.post<Device>(`${EBS2}/zcloud`, body);
export const updateLocation = (id: string, body: LocationBody) =>
  api.put<Device>(`${EBS2}/devices/${encodeURIComponent(id)}/location`, body);
export const fetchZcloudCapacity = (signal?: AbortSignal) => api.get<HostFree[]>(`${EBS2}/zcloud/capacity`, { signal });
export const fetchZcloudRentals = (hostId: string, signal?: AbortSignal) =>
  api.get<ZcloudRental[]>(`${EBS2}/devices/${encodeURIComponent(hostId)}/zcloud-rentals`, { signal });
export const endZcloudRental = (hostId: string, machineId: string) =>
  api.post<ZcloudRental>(`${EBS2}/devices/${encodeURIComponent(hostId)}/zcloud-rentals/${encodeURIComponent(machineId)}/end`, {});
