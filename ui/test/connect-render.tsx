// Rendering helpers of the Connect tests: a component in a language and a router, in happy-dom.
import { act, StrictMode, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { MemoryRouter } from 'react-router';
import { afterEach, beforeEach, vi } from 'vitest';
import type { Lang } from '../src/i18n';
import { LangContext } from '../src/lib/i18n';
import { loadSession } from '../src/stores/session';
import { useSettings } from '../src/stores/settings';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root | null = null;
let host: HTMLElement | null = null;

export async function show(node: ReactNode, lang: Lang = 'en'): Promise<HTMLElement> {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  await act(async () => {
    root!.render(
      <StrictMode>
        <LangContext.Provider value={lang}>
          <MemoryRouter>{node}</MemoryRouter>
        </LangContext.Provider>
      </StrictMode>,
    );
  });
  return host;
}

/** Each test of the file runs signed in (a token), in English; after it, unmounted with the real fetch back. */
export function signedInEachTest() {
  beforeEach(() => {
    localStorage.clear();
    localStorage.setItem('token', 'ACCESS');
    loadSession();
    useSettings.setState({ language: 'en', isPCMode: false });
  });
  afterEach(async () => {
    await unmount();
    vi.unstubAllGlobals();
  });
}

export async function unmount() {
  if (root) await act(async () => root!.unmount());
  host?.remove();
  root = null;
  host = null;
}

/** Lets fetches, timers and streams settle inside act(). */
export async function settle(ms = 0) {
  await act(async () => {
    await new Promise((r) => setTimeout(r, ms));
  });
}

/** Polls `check` inside act() until it stops throwing. */
export async function waitFor(check: () => void, timeoutMs = 3000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await settle(15);
    }
  }
}

export function envelope(data: unknown, code = 200, msg = 'ok') {
  return new Response(JSON.stringify({ code, data, msg }), { status: code === 200 ? 200 : code, headers: { 'Content-Type': 'application/json' } });
}

/** A text/event-stream response whose body arrives in the given chunks. */
export function eventStream(chunks: string[], keepOpen = false) {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(enc.encode(c));
      if (!keepOpen) controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
}

export const sseLine = (ts: string, stream: 'stdout' | 'stderr', text: string) => `event: line\ndata: ${JSON.stringify({ ts, stream, text })}\n\n`;

/** A click inside act(). */
export async function click(el: Element) {
  await act(async () => {
    el.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
  });
}

/** Typing into a React-controlled input, inside act(). */
export async function type(el: HTMLInputElement, value: string) {
  await act(async () => {
    const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')!.set!;
    setter.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
}
