// Lets code outside React (the API client, the guard's async steps) navigate with the router.
type NavigateFn = (to: string, opts?: { replace?: boolean }) => void;

let navigator: NavigateFn | null = null;

export function registerNavigate(fn: NavigateFn | null) {
  navigator = fn;
}

export function navigateTo(to: string, opts?: { replace?: boolean }) {
  if (navigator) navigator(to, opts);
  else if (typeof window !== 'undefined') window.location.assign(to);
}

export function currentPath(): string {
  return typeof window === 'undefined' ? '/' : window.location.pathname;
}
