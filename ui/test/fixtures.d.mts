import type { App, NearbyDevice } from '../src/api/types';
import type { GpuNearbyDevice } from '../src/api/gpus';
export const app: App;
export const device: NearbyDevice;
export const gpuDevice: GpuNearbyDevice;
export function state(overrides?: Record<string, unknown>): Record<string, unknown>;
export const renderCases: [string, Record<string, unknown>, number, string, string][];
