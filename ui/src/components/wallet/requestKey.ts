// The Idempotency-Key of a form that moves coins: the same while the same request is retried (a
// lost answer never moves coins twice), a new one once it succeeded or the request changed.
import { useRef } from 'react';

const newKey = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

export function useRequestKey(prefix: string): { keyFor: (request: string) => string; done: () => void } {
  const current = useRef({ request: '', key: newKey(prefix) });
  return {
    keyFor: (request) => {
      if (current.current.request !== request) current.current = { request, key: newKey(prefix) };
      return current.current.key;
    },
    done: () => {
      current.current = { request: '', key: newKey(prefix) };
    },
  };
}
