// Opens this tab's live event stream (api/events.ts, loaded on demand) while an individual user is
// signed in outside PC mode (the people who have friends and messages, docs/product.md §2), and closes it
// when they sign out or another person signs in.
import { useEffect } from 'react';
import { useSession } from '../stores/session';
import { useSettings } from '../stores/settings';

export function useLiveEvents() {
  const loaded = useSession((s) => s.loaded);
  const token = useSession((s) => s.token);
  const userType = useSession((s) => s.userType);
  const person = useSession((s) => s.userInfo.email);
  const pcMode = useSettings((s) => s.isPCMode);
  const enabled = loaded && Boolean(token) && userType === 'user' && !pcMode;

  useEffect(() => {
    if (!enabled) return;
    let stop: (() => void) | null = null;
    let cancelled = false;
    void import('../api/events').then((live) => {
      if (cancelled) return;
      live.startLive();
      stop = live.stopLive;
    });
    return () => {
      cancelled = true;
      stop?.();
    };
  }, [enabled, person]);
}
