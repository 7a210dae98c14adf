// GPUs as they are (docs/api.md §"GPUs, as they are", issue 38): each GPU by its UUID with its
// driver, CUDA and compute capability, how many a box has free, its last verification, the live use
// of each GPU and the series of the metrics call. The shapes are written by hand until the server's
// OpenAPI document has them (then src/api/types.ts names them from schema.d.ts and these go). Every
// field a box reports may be missing or null (an agent older than issue 38, a server without them):
// the pages show what there is.
import { api } from './client';
import type { AiCompute, Device, DeviceFit, Gap, InstallationDetails, NearbyDevice, OpsOverview } from './types';

const EBS2 = '/api/ebs/v2';

/** One GPU of a box (`spec.gpus[]`): name, passthrough and vram always; the rest from NVML. */
export interface GpuDetails {
  name: string;
  passthrough: boolean;
  /** bytes */
  vram: number;
  index?: number | null;
  /** NVIDIA's `GPU-…` UUID. */
  uuid?: string | null;
  /** The driver's version, "580.159.04". */
  driver?: string | null;
  /** The highest CUDA version the driver runs, "13.0". */
  cuda?: string | null;
  compute_capability?: string | null;
  /** MIG mode on. */
  mig?: boolean | null;
}

/** Why a GPU failed its verification (stable names; the pages word them). */
export const GPU_CHECK_REASONS = ['slow_memory', 'slow_host_link', 'ecc_errors', 'throttled', 'cuda_unavailable', 'copy_failed', 'not_found'] as const;
export type GpuCheckReason = (typeof GPU_CHECK_REASONS)[number];

/** What the last verification found of one GPU. */
export interface GpuCheck {
  uuid: string;
  ok: boolean;
  /** Device-to-device copy bandwidth, GB/s. */
  d2d_gbps: number | null;
  /** Host-to-device copy bandwidth, GB/s. */
  h2d_gbps: number | null;
  reason: GpuCheckReason | string | null;
}

export interface Verification {
  /** RFC 3339 */
  at: string;
  gpus: GpuCheck[];
}

/** How busy one GPU was at the latest beat (`metrics.gpus[]`). */
export interface GpuUse {
  uuid: string;
  /** 0-100 */
  utilization: number;
  /** bytes */
  memory_used: number;
  /** °C */
  temperature: number | null;
  /** W */
  power_watts: number | null;
}

type DeviceMetricsNow = NonNullable<Device['metrics']> & { gpus?: GpuUse[] | null };

/** A device as its owner sees it, with its GPUs as they are. */
export type GpuDevice = Omit<Device, 'spec' | 'metrics'> & {
  spec: Omit<Device['spec'], 'gpus'> & { gpus: GpuDetails[] };
  metrics: DeviceMetricsNow | null;
  /** How many of its GPUs no installation or Z-CLOUD machine holds. */
  gpus_free?: number | null;
  /** The last verification; null: never verified. */
  verification?: Verification | null;
};

/** A GPU an installation holds. */
export interface HeldGpu {
  uuid?: string | null;
  name: string;
  /** bytes */
  vram: number;
}

/** An installation with the GPUs it holds (empty when none). */
export type GpuInstallation = InstallationDetails & { gpus?: HeldGpu[] | null };
export type GpuAiCompute = Omit<AiCompute, 'gpus'> & { gpus: HeldGpu[] };

/**
 * A device of the install and rent dialogs: how many GPUs are free, whether its GPUs passed their
 * last verification (null: never verified) and its CUDA. `gaps` of `cuda_too_old` carry strings.
 */
export type OfferFit = Omit<DeviceFit, 'gaps'> & {
  gaps: Gap[];
  gpus_free?: number | null;
  verified?: boolean | null;
  cuda?: string | null;
};

/** A nearby device with its GPUs as they are. */
export type GpuNearbyDevice = Omit<NearbyDevice, 'gpus'> & {
  gpus: GpuDetails[];
  gpus_free?: number | null;
  verified?: boolean | null;
};

/** GPUs across the market (the operator's overview). */
export interface GpuOverview {
  /** GPUs known on bound boxes. */
  total: number;
  /** Of them, on online boxes. */
  online: number;
  /** Held by an installation or a Z-CLOUD machine. */
  held: number;
  /** Utilization ≥ 10 % at the last beat. */
  busy: number;
  /** Mean utilization of online GPUs at their last beat, 0-100; null when none. */
  utilization: number | null;
}
export type GpuOpsOverview = OpsOverview & { gpus?: GpuOverview | null };

/** One point of a box's CPU (percent) or memory (bytes) series. */
export interface MetricPoint {
  at: string;
  value: number;
}

export interface GpuPoint {
  at: string;
  utilization: number;
  memory_used: number;
  temperature: number | null;
  power_watts: number | null;
}

export interface GpuSeries {
  uuid: string;
  name: string;
  series: GpuPoint[];
}

/** `GET /devices/{id}/metrics`: a renter gets only the GPUs their installation holds, no cpu or memory. */
export interface DeviceMetrics {
  cpu: MetricPoint[];
  memory: MetricPoint[];
  gpus: GpuSeries[];
}

export const fetchDeviceMetrics = (id: string, minutes: number, signal?: AbortSignal) =>
  api.get<DeviceMetrics>(`${EBS2}/devices/${encodeURIComponent(id)}/metrics`, { query: { minutes }, signal });

/** Asks the box to measure its GPUs (the owner); the result arrives as `verification` a few seconds later. */
export const verifyDevice = (id: string) => api.post<GpuDevice>(`${EBS2}/devices/${encodeURIComponent(id)}/verify`, {});
