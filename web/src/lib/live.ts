/**
 * Live state changes of runs and steps from `GET /events/stream`, one connection shared by every
 * page that listens. When the server has no stream, pages poll instead (`mode` says which).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { openSse, type SseHandle } from './sse.js';
import { parseChange, type LiveChange, type LiveMode } from './live-change.js';

export type { LiveChange, LiveMode };

type Sub = (c: LiveChange) => void;
const subs = new Set<Sub>();
const modeSubs = new Set<(m: LiveMode) => void>();
let mode: LiveMode = 'connecting';
let handle: SseHandle | undefined;
let unsupported = false;

function setMode(m: LiveMode): void {
  mode = m;
  for (const fn of modeSubs) fn(m);
}

function connect(): void {
  if (handle || unsupported) return;
  handle = openSse('/osm/api/events/stream', {
    onOpen: () => setMode('live'),
    onDrop: () => setMode('connecting'),
    onUnsupported: () => {
      unsupported = true;
      handle = undefined;
      setMode('polling');
    },
    onMessage: (m) => {
      const c = parseChange(m.data);
      if (c) for (const fn of subs) fn(c);
    },
  });
}

function disconnectSoon(): void {
  // Pages come and go on navigation: keep the connection across a quick page change.
  setTimeout(() => {
    if (subs.size === 0 && handle) {
      handle.close();
      handle = undefined;
      if (!unsupported) setMode('connecting');
    }
  }, 2000);
}

/** Subscribes to run/step changes while mounted; returns the live mode (poll unless 'live'). */
export function useLive(onChange: Sub): LiveMode {
  const saved = useRef(onChange);
  saved.current = onChange;
  const [m, setM] = useState(mode);
  useEffect(() => {
    const sub: Sub = (c) => saved.current(c);
    subs.add(sub);
    modeSubs.add(setM);
    setM(unsupported ? 'polling' : mode);
    connect();
    return () => {
      subs.delete(sub);
      modeSubs.delete(setM);
      disconnectSoon();
    };
  }, []);
  return m;
}
