// A link for pages that render many of them (the market's cards and category tabs, the nearby
// cards): react-router's Link resolves its path and sets up its click handler, prefetch state and
// navigate function per link, which costs ~0.1 ms each in the server renderer (QuickJS). These
// targets are absolute in-app paths, so nothing needs resolving: the anchor carries the path and
// a plain click navigates in the app through the router's navigate (lib/navigation), exactly as
// Link does (a modified or non-primary click, or another target, is left to the browser).
import type { AnchorHTMLAttributes, MouseEvent } from 'react';
import { currentPath, navigateTo } from '../lib/navigation';

type Props = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

/** True for a click the app handles itself (what react-router's Link checks). */
export function isPlainClick(e: MouseEvent<HTMLAnchorElement>, target: string | undefined): boolean {
  return !e.defaultPrevented && e.button === 0 && (!target || target === '_self') && !(e.metaKey || e.altKey || e.ctrlKey || e.shiftKey);
}

export function ListLink({ to, onClick, target, ...rest }: Props) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (!isPlainClick(e, target)) return;
    e.preventDefault();
    // Like Link: a click on the link to where the page already is replaces the history entry.
    const here = typeof window === 'undefined' ? '' : currentPath() + window.location.search;
    navigateTo(to, { replace: here === to });
  };
  return <a href={to} target={target} onClick={handle} {...rest} />;
}
