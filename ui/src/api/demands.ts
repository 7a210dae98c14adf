// On-demand orders. Proposed call (API.md leaves demands to /api/rmp/v1): POST /api/rmp/v1/demands.
import { api } from './client';

export const DEMANDS_PATH = '/api/rmp/v1/demands';

export interface DemandBody {
  name: string;
  app: string | null;
  gpu_count: number | null;
  gpu_models: string[];
  distance_limit_km: number | null;
}

export const placeDemand = (body: DemandBody) => api.post<unknown>(DEMANDS_PATH, body);
