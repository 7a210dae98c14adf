// The document's only script. It lets the browser paint the server's markup first, then fetches
// the app that hydrates it. Fetched beside the stylesheet, the app's 32 scripts (100 kB gzip)
// shared a slow line with it and held the first paint back: Lighthouse's phone measured a first
// paint of 2.6 s on /m/market. Pages rendered on the client (data-ssr="0") load at once.
// No imports: this file stays a few hundred bytes.
const me = document.querySelector<HTMLScriptElement>('script[data-main]');

/** Links asked for in one task: each costs the main thread a request's start (about 1.3 ms at a
 * phone's speed), so the app's 40-odd chunks asked at once held it for 140 ms (issue 41). */
const PER_TASK = 8;

function load(): void {
  if (!me?.dataset.main) return;
  const main = me.dataset.main;
  // The entry's and the app's chunks (ui/build.mjs), named up front so they arrive together, not
  // one level at a time.
  const chunks = (me.dataset.preload ?? '').split(' ').filter(Boolean);
  const next = () => {
    const links = document.createDocumentFragment();
    for (const chunk of chunks.splice(0, PER_TASK)) {
      const link = document.createElement('link');
      link.rel = 'modulepreload';
      link.href = `/static/${chunk}`;
      links.appendChild(link);
    }
    document.head.appendChild(links);
    if (chunks.length) setTimeout(next, 0);
    else import(`/static/${main}`).catch((err: unknown) => console.error('loading the app', err));
  };
  next();
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
