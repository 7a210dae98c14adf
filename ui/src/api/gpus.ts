// GPUs as they are (docs/api.md §"GPUs, as they are", issue 38): each GPU by its UUID with its
// driver, CUDA and compute capability, how many a box has free, its last verification, the live use
// of each GPU and the series of the metrics call, named from the server's OpenAPI document. Every
// field a box reports may be missing or null (an agent older than issue 38, a server without them):
// the pages show what there is.
import { api } from './client';
import type { components } from './schema';
import type { AiCompute, Device, DeviceFit, Gap, InstallationDetails, NearbyDevice, OpsOverview } from './types';

const EBS2 = '/api/ebs/v2';

type Schemas = components['schemas'];

/** One GPU of a box (`spec.gpus[]`): name, passthrough and vram always; the rest from NVML. */
export type GpuDetails = Schemas['Gpu'];

/** Why a GPU failed its verification (stable names; the pages word them). */
export const GPU_CHECK_REASONS = ['slow_memory', 'slow_host_link', 'ecc_errors', 'throttled', 'cuda_unavailable', 'copy_failed', 'not_found'] as const;
export type GpuCheckReason = (typeof GPU_CHECK_REASONS)[number];

/** What the last verification found of one GPU. */
export type GpuCheck = Schemas['GpuCheck'];
export type Verification = Schemas['Verification'];
/** How busy one GPU was at the latest beat (`metrics.gpus[]`). */
export type GpuUse = Schemas['GpuUse'];

/** A device as its owner sees it, with its GPUs as they are. */
export type GpuDevice = Device;

/** A GPU an installation holds. */
export type HeldGpu = Schemas['HeldGpu'];

/** An installation with the GPUs it holds (empty when none). */
export type GpuInstallation = InstallationDetails;
export type GpuAiCompute = AiCompute;

/**
 * A device of the install and rent dialogs: how many GPUs are free, whether its GPUs passed their
 * last verification (null: never verified) and its CUDA. `gaps` of `cuda_too_old` carry strings.
 */
export type OfferFit = Omit<DeviceFit, 'gaps'> & { gaps: Gap[] };

/** A nearby device with its GPUs as they are. */
export type GpuNearbyDevice = NearbyDevice;

/** GPUs across the market (the operator's overview). */
export type GpuOverview = Schemas['MarketGpus'];
export type GpuOpsOverview = OpsOverview;

/** One point of a box's CPU (percent) or memory (bytes) series. */
export type MetricPoint = Schemas['Point'];
export type GpuPoint = Schemas['GpuPoint'];
export type GpuSeries = Schemas['GpuSeries'];

/** `GET /devices/{id}/metrics`: a renter gets only the GPUs their installation holds, no cpu or memory. */
export type DeviceMetrics = Schemas['DeviceMetrics'];

export const fetchDeviceMetrics = (id: string, minutes: number, signal?: AbortSignal) =>
  api.get<DeviceMetrics>(`${EBS2}/devices/${encodeURIComponent(id)}/metrics`, { query: { minutes }, signal });

/** Asks the box to measure its GPUs (the owner); the result arrives as `verification` a few seconds later. */
export const verifyDevice = (id: string) => api.post<GpuDevice>(`${EBS2}/devices/${encodeURIComponent(id)}/verify`, {});
