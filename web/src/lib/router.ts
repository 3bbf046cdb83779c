/**
 * A tiny history router: the path decides the page, the query string holds filters (so a reload or
 * a shared link shows the same view). Internal links are plain <a href> elements; clicks on them
 * are handled here without a page load.
 */
import { useEffect, useState } from 'preact/hooks';

type Listener = () => void;
const listeners = new Set<Listener>();

function notify(): void {
  for (const fn of listeners) fn();
}

/** Goes to an in-app URL (pushes history unless `replace`). */
export function navigate(url: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  notify();
  if (!opts.replace) window.scrollTo(0, 0);
}

/** Installs the global link and back/forward handlers (once, at start). */
export function installRouter(): void {
  window.addEventListener('popstate', notify);
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const href = a.getAttribute('href');
    if (!href || !href.startsWith('/') || href.startsWith('//') || href.startsWith('/osm/api/')) return;
    e.preventDefault();
    navigate(href);
  });
}

/** The current location; re-renders on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, set] = useState(0);
  useEffect(() => {
    const fn = () => set((n) => n + 1);
    listeners.add(fn);
    return () => void listeners.delete(fn);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Matches `/runs/:id` style patterns; params are decoded. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return undefined;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const seg = p[i]!;
    if (seg.startsWith(':')) {
      try {
        out[seg.slice(1)] = decodeURIComponent(s[i]!);
      } catch {
        return undefined;
      }
    } else if (seg !== s[i]) return undefined;
  }
  return out;
}

/** One query-string value as state: setting it replaces the URL (no history entry per keystroke). */
export function useQueryParam(name: string, fallback = ''): [string, (v: string) => void] {
  const { query } = useLocation();
  const value = query.get(name) ?? fallback;
  const set = (v: string) => {
    const q = new URLSearchParams(location.search);
    if (v === '' || v === fallback) q.delete(name);
    else q.set(name, v);
    // Changing a filter starts again from the first page.
    if (name !== 'offset') q.delete('offset');
    const s = q.toString();
    navigate(`${location.pathname}${s ? `?${s}` : ''}`, { replace: true });
  };
  return [value, set];
}

/** A path segment, encoded. */
export function seg(v: string | number): string {
  return encodeURIComponent(String(v));
}
