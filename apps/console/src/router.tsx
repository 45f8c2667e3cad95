import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// The console's pages are paths below /console (the gateway answers every one with the app), moved
// between with the History API: links work, the back button works, a deep link opens its page.

export const base = '/console';
const changed = 'hallmark:navigate';

/** The current location below /console: `/codes/abc?x=1` → { path: '/codes/abc', query }. */
export interface Location {
  path: string;
  query: URLSearchParams;
}

function currentLocation(): Location {
  const rest = window.location.pathname.startsWith(base) ? window.location.pathname.slice(base.length) : '/';
  return { path: rest === '' ? '/' : rest.replace(/\/+$/, '') || '/', query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const target = `${base}${to === '/' ? '/' : to}`;
  if (options.replace) window.history.replaceState(null, '', target);
  else window.history.pushState(null, '', target);
  window.dispatchEvent(new Event(changed));
}

export function useLocation(): Location {
  const [location, setLocation] = useState(currentLocation);
  useEffect(() => {
    const update = () => setLocation(currentLocation());
    window.addEventListener('popstate', update);
    window.addEventListener(changed, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(changed, update);
    };
  }, []);
  return location;
}

interface AnchorProps {
  to: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page' | undefined;
}

/** A link to a page of the console: a real href (open in a new tab works), followed without a reload. */
export function Link({ to, children, class: className, 'aria-current': current }: AnchorProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={`${base}${to}`} onClick={onClick} class={className} aria-current={current}>
      {children}
    </a>
  );
}
