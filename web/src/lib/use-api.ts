/** Loading data for a component: state (data, error, loading) that keeps the last data while reloading. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Loads again (e.g. after an action or a live event); keeps the current data meanwhile. */
  reload: () => void;
}

/** Runs `load` when `deps` change; a newer load supersedes (and aborts) an older one. */
export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean; key?: string }>({ loading: true });
  const [tick, setTick] = useState(0);
  const current = useRef<AbortController | undefined>(undefined);
  // Loading from the very render whose inputs changed (not one render later, when the effect runs):
  // a pager must not offer "Next" again before the page it asked for has arrived.
  const key = JSON.stringify([...deps, tick]);
  useEffect(() => {
    const ctl = new AbortController();
    current.current?.abort();
    current.current = ctl;
    setState((s) => ({ ...s, loading: true }));
    load(ctl.signal).then(
      (data) => {
        if (!ctl.signal.aborted) setState({ data, loading: false, key });
      },
      (error: Error) => {
        if (!ctl.signal.aborted && error.name !== 'AbortError') setState((s) => ({ data: s.data, error, loading: false, key }));
      },
    );
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading || state.key !== key, reload };
}

/** Calls `fn` every `ms` while `active` (and the page is visible). */
export function useInterval(fn: () => void, ms: number, active = true): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms, active]);
}
