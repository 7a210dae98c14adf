// Where the nearby pages and the Rent dialog's distances measure from: the visitor's location once given ("Use my location"), else
// the configured map centre.
import { useEffect, useState } from 'react';
import { useT } from '../lib/i18n';
import { useBoot } from '../stores/boot';
import { loadVisitorLocation, setVisitorLocation, useVisitorLocation, type LatLng } from '../stores/location';

/** The point distances are measured from, and whether it is the visitor's own. */
export function useNearbyPoint(): { at: LatLng; own: boolean } {
  const boot = useBoot();
  const stored = useVisitorLocation((s) => s.at);
  useEffect(() => loadVisitorLocation(), []);
  return stored ? { at: stored, own: true } : { at: boot.config.map.center, own: false };
}

/** "Use my location": asks the browser, keeps the answer for the other nearby pages. */
export function useLocate() {
  const t = useT();
  const [locating, setLocating] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const locate = () => {
    if (!('geolocation' in navigator)) {
      setNote(t('location_denied'));
      return;
    }
    setLocating(true);
    navigator.geolocation.getCurrentPosition(
      (pos) => {
        setLocating(false);
        setNote(null);
        setVisitorLocation({ lat: pos.coords.latitude, lng: pos.coords.longitude });
      },
      () => {
        setLocating(false);
        setNote(t('location_denied'));
      },
      { timeout: 10_000 },
    );
  };
  return { locate, locating, note };
}
