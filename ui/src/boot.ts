// The document's only script. It lets the browser paint the server's markup first, then fetches
// the app that hydrates it. Fetched beside the stylesheet, the app's 32 scripts (100 kB gzip)
// shared a slow line with it and held the first paint back: Lighthouse's phone measured a first
// paint of 2.6 s on /m/market. Pages rendered on the client (data-ssr="0") load at once.
// No imports: this file stays a few hundred bytes.
const me = document.querySelector<HTMLScriptElement>('script[data-main]');

function load(): void {
  if (!me?.dataset.main) return;
  // The entry's static imports, named up front so they arrive together, not one level at a time.
  for (const chunk of (me.dataset.preload ?? '').split(' ')) {
    if (!chunk) continue;
    const link = document.createElement('link');
    link.rel = 'modulepreload';
    link.href = `/static/${chunk}`;
    document.head.appendChild(link);
  }
  import(`/static/${me.dataset.main}`).catch((err: unknown) => console.error('loading the app', err));
}

function afterFirstPaint(run: () => void): void {
  let done = false;
  const go = () => {
    if (done) return;
    done = true;
    run();
  };
  const root = document.getElementById('root');
  if (root?.dataset.ssr !== '1' || document.visibilityState === 'hidden') return go();
  if (typeof PerformanceObserver !== 'undefined' && PerformanceObserver.supportedEntryTypes?.includes('paint')) {
    const observer = new PerformanceObserver((list) => {
      if (!list.getEntriesByName('first-contentful-paint').length) return;
      observer.disconnect();
      go();
    });
    observer.observe({ type: 'paint', buffered: true });
  } else {
    requestAnimationFrame(() => setTimeout(go, 0));
  }
  // Never held longer than a second, whatever the browser reports.
  setTimeout(go, 1000);
}

afterFirstPaint(load);
