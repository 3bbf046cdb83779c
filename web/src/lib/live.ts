/**
 * Live state changes of runs and steps from `GET /events/stream`, one connection shared by every
 * page that listens. When the server has no stream, pages poll instead (`mode` says which).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { openSse, type SseHandle } from './sse.js';

export interface RunChange {
  kind: 'run';
  id?: number;
  run_uuid: string;
  status: string;
  workflow_name?: string;
  target?: string;
  workspace?: string;
  completed_steps?: number;
  total_steps?: number;
}

export interface StepChange {
  kind: 'step';
  run_uuid: string;
  step_name: string;
  status: string;
  exit_code?: number;
  duration_ms?: number;
}

export type LiveChange = RunChange | StepChange;
export type LiveMode = 'connecting' | 'live' | 'polling';

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

/** Reads one message of the stream as a run or step change (anything else is ignored). */
export function parseChange(data: string): LiveChange | undefined {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!j || typeof j !== 'object' || typeof j.run_uuid !== 'string') return undefined;
  if (typeof j.step_name === 'string') return { kind: 'step', ...(j as object) } as StepChange;
  if (typeof j.status === 'string') return { kind: 'run', ...(j as object) } as RunChange;
  return undefined;
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
