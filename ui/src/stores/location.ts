// The visitor's own location ("Use my location" on the nearby pages), kept so the details page and
// the map measure from it too. Read from storage after hydration (the server renders from the
// configured map centre), written when the browser hands a position over.
import { create } from 'zustand';
import { readJson, storageSet } from '../lib/storage';

const LOCATION_KEY = 'zm_location';

export interface LatLng {
  lat: number;
  lng: number;
}

interface LocationState {
  at: LatLng | null;
  loaded: boolean;
}

export const useVisitorLocation = create<LocationState>()(() => ({ at: null, loaded: false }));

function isLatLng(v: unknown): v is LatLng {
  if (!v || typeof v !== 'object') return false;
  const { lat, lng } = v as Record<string, unknown>;
  return typeof lat === 'number' && typeof lng === 'number' && Math.abs(lat) <= 90 && Math.abs(lng) <= 180;
}

/** Reads the stored location once (client only). */
export function loadVisitorLocation() {
  if (useVisitorLocation.getState().loaded) return;
  const v = readJson<unknown>(LOCATION_KEY);
  useVisitorLocation.setState({ at: isLatLng(v) ? { lat: v.lat, lng: v.lng } : null, loaded: true });
}

export function setVisitorLocation(at: LatLng) {
  storageSet(LOCATION_KEY, JSON.stringify({ lat: at.lat, lng: at.lng }));
  useVisitorLocation.setState({ at: { lat: at.lat, lng: at.lng }, loaded: true });
}
