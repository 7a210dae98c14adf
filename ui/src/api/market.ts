// Public market and nearby calls of docs/api.md.
import { PAGE_SIZE } from '../constants';
import { api } from './client';
import type { App, AppDetails, DownloadLinks, ListPage, NearbyDevice } from './types';

export const fetchApplications = (q: { category?: string; offset?: number; limit?: number }, signal?: AbortSignal) =>
  api.get<ListPage<App>>('/api/ebs/v1/market/applications', {
    query: { category: q.category, offset: q.offset ?? 0, limit: q.limit ?? PAGE_SIZE },
    auth: 'none',
    signal,
  });

export const fetchApplication = (id: string, signal?: AbortSignal) =>
  api.get<AppDetails>(`/api/ebs/v1/market/applications/${encodeURIComponent(id)}`, { auth: 'none', signal });

interface SearchQuery {
  keyword?: string;
  category?: string;
  display_type?: string;
  tier?: string;
  offset?: number;
  limit?: number;
}
export const searchApplications = (q: SearchQuery, signal?: AbortSignal) =>
  api.get<ListPage<App>>('/api/ebs/v1/market/search', {
    query: { ...q, offset: q.offset ?? 0, limit: q.limit ?? PAGE_SIZE },
    auth: 'none',
    signal,
  });

export const fetchDownloadLinks = (signal?: AbortSignal) =>
  api.get<DownloadLinks>('/api/ebs/v1/download/links', { auth: 'none', signal });

interface NearbyQuery {
  lat: number;
  lng: number;
  radius_km?: number;
  offset?: number;
  limit?: number;
}
export const fetchNearby = (q: NearbyQuery, signal?: AbortSignal) =>
  api.get<ListPage<NearbyDevice>>('/api/ebs/v2/nearby', {
    query: { ...q, offset: q.offset ?? 0, limit: q.limit ?? PAGE_SIZE },
    auth: 'none',
    signal,
  });

export const fetchNearbyDevice = (id: string, at: { lat: number; lng: number } | null, signal?: AbortSignal) =>
  api.get<NearbyDevice>(`/api/ebs/v2/nearby/${encodeURIComponent(id)}`, {
    query: at ? { lat: at.lat, lng: at.lng } : undefined,
    auth: 'none',
    signal,
  });
