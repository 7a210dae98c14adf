// @vitest-environment happy-dom
// Server markup from render() must hydrate with no recoverable error (the e2e "hydration" signal),
// and the signed-in flows of the guard must behave as SPEC.md §2 says.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Root } from 'react-dom/client';
import { render } from '../src/server';
import { start } from '../src/app/start';
import { useSession } from '../src/stores/session';
import { useFeedback } from '../src/stores/feedback';
import { navigateTo } from '../src/lib/navigation';
import { app, renderCases, state } from './fixtures.mjs';

let root: Root | null = null;
let errors: unknown[][] = [];

function envelope(data: unknown, code = 200, msg = 'ok') {
  return new Response(JSON.stringify({ code, data, msg }), { status: code === 200 ? 200 : code, headers: { 'Content-Type': 'application/json' } });
}

function mount(url: string, overrides: Record<string, unknown> = {}) {
  const s = state({ url, ...overrides });
  const { html } = render(url, JSON.stringify(s));
  window.history.replaceState(null, '', url);
  document.body.innerHTML =
    `<div id="root" data-ssr="1">${html}</div>` +
    `<script id="zm-state" type="application/json">${JSON.stringify(s).replace(/</g, '\\u003c')}</script>`;
  (window as unknown as { __zmHydrated?: boolean }).__zmHydrated = false;
  root = start(document);
}

/** Waits until React attached to the server markup (event handlers work from then on). */
const hydrated = () => waitFor(() => expect((window as unknown as { __zmHydrated?: boolean }).__zmHydrated).toBe(true));

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` stops throwing (lazy chunks and fetches settle at their own pace). */
async function waitFor(check: () => void, timeoutMs = 3000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await tick(20);
    }
  }
}

beforeEach(() => {
  errors = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    errors.push(args);
  });
  localStorage.clear();
  sessionStorage.clear();
});

afterEach(() => {
  root?.unmount();
  root = null;
  vi.unstubAllGlobals();
});

describe('hydration of server markup', () => {
  for (const [url, overrides] of renderCases) {
    if (url === '/pc-web?redirect=%2Fmarket&token=x') continue; // navigates away at once (tested below)
    it(`hydrates ${url} ${JSON.stringify(overrides).slice(0, 60)}`, async () => {
      vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
      mount(url, overrides as Record<string, unknown>);
      await tick();
      expect(errors.map((e) => e.map((x) => String(x).slice(0, 1500)).join(" | "))).toEqual([]);
    });
  }
});

describe('guard', () => {
  const session = () => {
    localStorage.setItem('token', 'tok');
    localStorage.setItem('refresh_token', 'ref');
    localStorage.setItem('access_token_expire', String(Math.floor(Date.now() / 1000) + 7200));
    localStorage.setItem('userInfo', JSON.stringify({ name: 'Ann', avatar_url: '', email: 'ann@example.com' }));
    localStorage.setItem('organizationList', JSON.stringify([{ id: 'user', name: 'Personal', network_id: '', owner: '' }]));
  };

  it('sends visitors to sign-in', async () => {
    vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
    mount('/devices');
    await waitFor(() => expect(window.location.pathname).toBe('/auth/signin'));
    expect(new URLSearchParams(window.location.search).get('redirect')).toBe('/devices');
    expect(errors).toEqual([]);
  });

  it('loads the menu, hides isHide entries, renders the page', async () => {
    session();
    const fetchMock = vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      if (url.startsWith('/api/iam/v1/menus')) {
        expect((init?.headers as Record<string, string>).Authorization).toBe('Bearer tok');
        return Promise.resolve(
          envelope([
            { path: '/account', name: 'account', component: 'account', meta: { icon: 'account', title: 'account', isHide: false } },
            { path: '/account/password', name: 'pw', component: 'account/password', meta: { isHide: true } },
            { path: '/wallet', name: 'wallet', component: 'wallet', meta: { isHide: false } },
          ]),
        );
      }
      return new Promise<Response>(() => {});
    });
    vi.stubGlobal('fetch', fetchMock);
    mount('/account/password');
    await waitFor(() => expect(document.querySelector('main')!.textContent).toContain('Current password'));
    expect(useSession.getState().menuStatus).toBe('loaded');
    const side = document.querySelector('.side-menu')!;
    expect(side.textContent).toContain('Account');
    expect(side.textContent).toContain('Wallet');
    expect(side.textContent).not.toContain('Change Password');
    expect(document.querySelector('main')!.textContent).toContain('Current password');
    expect(document.title).toBe('Change Password - ZMarket');
    expect(errors).toEqual([]);
  });

  it('empty menu: warns, clears the token, goes to sign-in', async () => {
    session();
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(envelope([]))));
    mount('/app');
    await waitFor(() => expect(window.location.pathname).toBe('/auth/signin'));
    expect(localStorage.getItem('token')).toBeNull();
    expect(useFeedback.getState().toasts.map((t) => t.text)).toContain(
      'You have no access to any menu, please contact the administrator',
    );
  });

  it('menu failure: clears the token, goes to sign-in', async () => {
    session();
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(envelope(null, 500, 'boom'))));
    mount('/app');
    await waitFor(() => expect(window.location.pathname).toBe('/auth/signin'));
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('a navigation made while the menu loads is not undone when it arrives', async () => {
    session();
    let answer: (r: Response) => void = () => {};
    vi.stubGlobal('fetch', vi.fn((input: RequestInfo | URL) =>
      String(input).startsWith('/api/iam/v1/menus')
        ? new Promise<Response>((r) => { answer = r; })
        : new Promise<Response>(() => {}),
    ));
    mount('/app');
    await hydrated();
    await waitFor(() => expect(useSession.getState().menuStatus).toBe('loading'));
    // What the header's company switcher does before the menu is there.
    navigateTo('/company-email');
    await waitFor(() => expect(window.location.pathname).toBe('/company-email'));
    answer(envelope([
      { path: '/app', name: 'app', component: 'app', meta: {} },
      { path: '/company-email', name: 'companies', component: 'company-email', meta: {} },
    ]));
    await waitFor(() => expect(useSession.getState().menuStatus).toBe('loaded'));
    await tick(50);
    expect(window.location.pathname).toBe('/company-email');
  });

  it('a known page the menu does not grant shows 403 inside the layout', async () => {
    session();
    vi.stubGlobal('fetch', vi.fn((input: RequestInfo | URL) =>
      String(input).startsWith('/api/iam/v1/menus')
        ? Promise.resolve(envelope([{ path: '/app', name: 'app', component: 'app', meta: {} }]))
        : new Promise<Response>(() => {}),
    ));
    mount('/company');
    await waitFor(() => expect(document.querySelector('main')!.textContent).toContain('Sorry, you do not have access to this page'));
  });
});

describe('sign-in page', () => {
  it('shows SPEC.md messages, then stores the session and leaves', async () => {
    const fetchMock = vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
      if (String(input) === '/api/iam/v2/login/password') {
        expect(JSON.parse(String(init?.body))).toEqual({ email: 'ann@example.com', password: 'abcd1234' });
        return Promise.resolve(
          envelope({
            token: 'T',
            refresh_token: 'R',
            access_token_expire: 4102444800,
            smeId: 'user',
            userType: 'user',
            userInfo: { name: 'Ann', avatar_url: '', email: 'ann@example.com' },
            organizationList: [{ id: 'user', name: 'Personal', network_id: '', owner: '' }],
          }),
        );
      }
      return new Promise<Response>(() => {});
    });
    vi.stubGlobal('fetch', fetchMock);
    mount('/auth/signin?redirect=%2Fwallet');
    await hydrated();
    const { fireEvent } = await import('./dom');
    // The page sits in a Suspense boundary that may hydrate after the root (slowly on a loaded
    // machine), and a submit before that is lost: submit until the validation shows.
    await waitFor(() => {
      fireEvent.submit(document.querySelector('form')!);
      expect(document.body.textContent).toContain('Email Required');
    }, 4000);
    const form = document.querySelector('form')!;
    expect(document.body.textContent).toContain('Password Required');
    const [email, password] = Array.from(document.querySelectorAll('input'));
    fireEvent.input(email, 'ann@example.com');
    fireEvent.input(password, 'abcd1234');
    fireEvent.submit(form);
    await waitFor(() => expect(localStorage.getItem('token')).toBe('T'));
    await waitFor(() => expect(window.location.pathname).toBe('/wallet'));
  });
});

describe('invitation link page', () => {
  const signedIn = () => {
    localStorage.setItem('token', 'tok');
    localStorage.setItem('refresh_token', 'ref');
    localStorage.setItem('access_token_expire', String(Math.floor(Date.now() / 1000) + 7200));
    localStorage.setItem('userInfo', JSON.stringify({ name: 'Bob', avatar_url: '', email: 'bob@example.com' }));
    localStorage.setItem('organizationList', JSON.stringify([{ id: 'user', name: 'Personal', network_id: '', owner: '' }]));
  };

  it('signed out, signs in on the page instead of leaving it (phones are not redirected here)', async () => {
    const fetchMock = vi.fn(() => new Promise<Response>(() => {}));
    vi.stubGlobal('fetch', fetchMock);
    mount('/iam/v1/sme/join?code=abc');
    await waitFor(() => expect(document.body.textContent).toContain('Sign in with the email address the invitation was sent to.'));
    expect(window.location.pathname).toBe('/iam/v1/sme/join');
    expect(document.querySelector('input[type="email"]')).not.toBeNull();
    expect(fetchMock).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
  });

  it('signed in, shows the invitation; only Accept joins, then offers to switch (issue 44)', async () => {
    signedIn();
    const calls: string[] = [];
    const invitation = { sme_id: 'c1', company: 'Acme Compute', invited_by: 'Olivia', role: 'member', status: 'invited', expires_at: null };
    vi.stubGlobal('fetch', vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      calls.push(`${init?.method ?? 'GET'} ${url}`);
      if (url.startsWith('/api/iam/v1/sme/join?code=abc')) return Promise.resolve(envelope(invitation));
      if (url === '/api/iam/v1/sme/join' && init?.method === 'POST') return Promise.resolve(envelope({ sme_id: 'c1', status: 'accepted' }));
      if (url === '/api/iam/v1/sme') {
        return Promise.resolve(envelope([
          { id: 'user', name: 'Personal', network_id: '', owner: '' },
          { id: 'c1', name: 'Acme Compute', network_id: 'n', owner: 'u1' },
        ]));
      }
      return new Promise<Response>(() => {});
    }));
    mount('/iam/v1/sme/join?code=abc');
    await waitFor(() => expect(document.body.textContent).toContain('Olivia invited you to join Acme Compute as Member.'));
    expect(calls.filter((c) => c.startsWith('POST'))).toEqual([]);
    const accept = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Accept and join')!;
    accept.click();
    await waitFor(() => expect(document.body.textContent).toContain('You joined the company.'));
    await waitFor(() => expect(document.body.textContent).toContain('Switch to Acme Compute'));
    expect(JSON.parse(localStorage.getItem('organizationList')!)).toHaveLength(2);
    expect(calls.filter((c) => c.startsWith('POST /api/iam/v1/sme/join'))).toHaveLength(1);
  });

  it('says so when the invitation expired', async () => {
    signedIn();
    vi.stubGlobal('fetch', vi.fn((input: RequestInfo | URL) =>
      String(input).startsWith('/api/iam/v1/sme/join')
        ? Promise.resolve(envelope({ sme_id: 'c1', company: 'Acme Compute', invited_by: 'Olivia', role: 'member', status: 'expired', expires_at: null }))
        : new Promise<Response>(() => {}),
    ));
    mount('/iam/v1/sme/join?code=old');
    await waitFor(() => expect(document.body.textContent).toContain('This invitation has expired.'));
    expect([...document.querySelectorAll('button')].some((b) => b.textContent === 'Accept and join')).toBe(false);
  });

  it('shows the refusal for another account with a way to switch accounts', async () => {
    signedIn();
    vi.stubGlobal('fetch', vi.fn((input: RequestInfo | URL) =>
      String(input).startsWith('/api/iam/v1/sme/join')
        ? Promise.resolve(envelope(null, 403, 'This invitation was sent to another email address'))
        : new Promise<Response>(() => {}),
    ));
    mount('/iam/v1/sme/join?code=abc');
    await waitFor(() => expect(document.body.textContent).toContain('This invitation was sent to another email address'));
    expect(document.body.textContent).toContain('Sign out and use another account');
  });
});

describe('list links (market cards and tabs)', () => {
  it('a plain click navigates in the app; a modified click is left to the browser', async () => {
    vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
    mount('/market', { data: { market: { items: [app], total: 1 }, marketTopPicks: { items: [], total: 0 } } });
    await hydrated();
    const card = document.querySelector<HTMLAnchorElement>('.card-grid .card-link')!;
    expect(card.getAttribute('href')).toBe('/market/details?id=app-1');
    // What the app did with the click, seen after its handler (the browser's own action, a new
    // tab for ctrl-click, is then cancelled so the test document stays).
    let preventedByApp: boolean | null = null;
    const afterApp = (e: Event) => {
      preventedByApp = e.defaultPrevented;
      e.preventDefault();
    };
    document.addEventListener('click', afterApp);
    card.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, ctrlKey: true }));
    document.removeEventListener('click', afterApp);
    expect(preventedByApp).toBe(false);
    expect(window.location.pathname).toBe('/market');
    const plain = new MouseEvent('click', { bubbles: true, cancelable: true });
    card.dispatchEvent(plain);
    expect(plain.defaultPrevented).toBe(true);
    await waitFor(() => expect(window.location.pathname + window.location.search).toBe('/market/details?id=app-1'));
    expect(errors).toEqual([]);
  });

  it('a category tab carries its path and marks the current one', async () => {
    vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
    mount('/market?category=AI', { data: { market: { items: [app], total: 1 } } });
    await hydrated();
    const current = document.querySelector<HTMLAnchorElement>('.category-tabs a[aria-current="page"]')!;
    expect(current.getAttribute('href')).toBe('/market?category=AI');
    const all = document.querySelector<HTMLAnchorElement>('.category-tabs a')!;
    all.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
    await waitFor(() => expect(window.location.pathname + window.location.search).toBe('/market'));
  });
});
