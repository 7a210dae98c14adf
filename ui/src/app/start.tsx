// Client start-up, separate from main.tsx so tests can hydrate server markup the same way.
import { StrictMode, startTransition, useEffect, type ReactNode } from 'react';
import { createRoot, hydrateRoot, type Root, type RootOptions } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App';
import { normalizeBootState } from '../stores/boot';
import { useSettings } from '../stores/settings';

function readState(doc: Document): unknown {
  const el = doc.getElementById('zm-state');
  if (!el?.textContent) return {};
  try {
    return JSON.parse(el.textContent);
  } catch {
    return {};
  }
}

/** Marks the page once React has attached (end-to-end tests wait for it). Renders nothing itself. */
function Attached({ children }: { children: ReactNode }) {
  useEffect(() => {
    (window as unknown as { __zmHydrated?: boolean }).__zmHydrated = true;
  }, []);
  return children;
}

export function start(doc: Document = document): Root {
  const boot = normalizeBootState(readState(doc));
  // API calls made before the stored settings are read use the language the server rendered with.
  useSettings.setState({ language: boot.lang });
  const root = doc.getElementById('root');
  if (!root) throw new Error('#root is missing');
  const tree = (
    <StrictMode>
      <BrowserRouter>
        <Attached>
          <App boot={boot} />
        </Attached>
      </BrowserRouter>
    </StrictMode>
  );
  const options: RootOptions = {
    onRecoverableError(error, info) {
      // e2e tests listen for this: a hydration mismatch must never pass silently.
      console.error('hydration', error, info?.componentStack ?? '');
    },
  };
  if (root.dataset.ssr === '1') {
    // Hydrated as a transition: React yields to the browser every few milliseconds instead of
    // holding the main thread for the whole tree (issue 41; a click meanwhile is replayed).
    let hydrated: Root | undefined;
    startTransition(() => {
      hydrated = hydrateRoot(root, tree, options);
    });
    return hydrated as Root;
  }
  const r = createRoot(root, options);
  r.render(tree);
  return r;
}
