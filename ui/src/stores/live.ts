// The live events of the signed-in person (GET /api/cim/v1/events, docs/social.md): the state of
// this tab's one connection, the social counts behind the menu badges, and the events themselves
// for the pages that show what they change. api/events.ts runs the connection.
import { useEffect, useRef } from 'react';
import { create } from 'zustand';

/**
 * `live`: the stream is open. `polling`: it is unavailable (refused, cut, the browser offline), so
 * the counts are polled while it is retried. `off`: signed out, or not an individual user.
 */
export type LiveStatus = 'off' | 'connecting' | 'live' | 'polling';

interface SocialCounts {
  unread_messages: number;
  pending_friend_requests: number;
}

interface LiveState {
  status: LiveStatus;
  counts: SocialCounts | null;
}

export const useLive = create<LiveState>()(() => ({ status: 'off', counts: null }));

/**
 * What a page may need to apply: a stream event by its name (`message`, `friend_request`, `friend`,
 * `read`, `notification`) with its parsed data, or `reload`: something may have been missed (the
 * stream opened afresh or resynced, or a poll tick while the stream is unavailable), load again.
 */
export type LiveEvent =
  | { kind: 'message' | 'friend_request' | 'friend' | 'read' | 'notification'; data: unknown }
  | { kind: 'reload'; data?: undefined };

const listeners = new Set<(e: LiveEvent) => void>();

/** Calls `fn` with every live event until the returned function is called. */
function onLiveEvent(fn: (e: LiveEvent) => void): () => void {
  listeners.add(fn);
  return () => {
    listeners.delete(fn);
  };
}

/** Calls the latest `fn` with every live event while the component is mounted. */
export function useLiveEvent(fn: (e: LiveEvent) => void) {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => onLiveEvent((e) => latest.current(e)), []);
}

export function emitLiveEvent(e: LiveEvent) {
  for (const fn of [...listeners]) fn(e);
}

