import type { App, NearbyDevice } from '../src/api/types';
export const app: App;
export const device: NearbyDevice;
export function state(overrides?: Record<string, unknown>): Record<string, unknown>;
export const renderCases: [string, Record<string, unknown>, number, string, string][];
