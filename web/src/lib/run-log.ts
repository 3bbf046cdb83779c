/**
 * A run's log, fed live: `GET /runs/{id}/logs` as Server-Sent Events (backfill, then lines as the
 * process writes them, resumed with Last-Event-ID, ended by the run's final status). On a server
 * without the stream, the steps' recorded output is polled instead (it arrives per finished step).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { openSse } from './sse.js';
import { LogBuffer, type LogLine } from '../components/log-view.js';
import type { Step } from '../types.js';

export interface StepEvent {
  step: string;
  status: string;
  exit_code?: number;
  duration_ms?: number;
}

export type LogMode = 'connecting' | 'live' | 'polling' | 'ended';

const FINAL = new Set(['completed', 'failed', 'cancelled', 'skipped']);

/** Lines of one finished step's recorded output (the polling fallback). */
export function stepLines(s: Step): LogLine[] {
  const out: LogLine[] = [];
  const split = (t: string) => t.replace(/\n$/, '').split('\n');
  if (s.output) for (const line of split(s.output)) out.push({ step: s.step_name, stream: 'stdout', line });
  if (s.error_message) for (const line of split(s.error_message)) out.push({ step: s.step_name, stream: 'stderr', line });
  return out;
}

export function useRunLog(runId: string, opts: { onStep: (e: StepEvent) => void; onEnd: (status: string) => void }): { buffer: LogBuffer; mode: LogMode } {
  const buffer = useMemo(() => new LogBuffer(), [runId]);
  const [mode, setMode] = useState<LogMode>('connecting');
  const saved = useRef(opts);
  saved.current = opts;

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const seen = new Map<string, string>();

    const poll = async () => {
      if (stopped) return;
      let finished = false;
      try {
        const [steps, run] = await Promise.all([api<{ data: Step[] }>(`/osm/api/runs/${encodeURIComponent(runId)}/steps`), api<{ data: { status: string } }>(`/osm/api/runs/${encodeURIComponent(runId)}`)]);
        for (const s of steps.data) {
          const key = s.id || s.step_name;
          const before = seen.get(key);
          if (before === s.status) continue;
          seen.set(key, s.status);
          if (!before && !FINAL.has(s.status)) buffer.push([{ step: s.step_name, stream: 'info', line: `${s.step_name} ${s.status}…` }]);
          if (FINAL.has(s.status)) buffer.push(stepLines(s));
          saved.current.onStep({ step: s.step_name, status: s.status, exit_code: s.exit_code, duration_ms: s.duration_ms });
        }
        if (FINAL.has(run.data.status)) {
          finished = true;
          setMode('ended');
          saved.current.onEnd(run.data.status);
        }
      } catch {
        /* try again on the next tick */
      }
      if (!finished && !stopped) timer = setTimeout(() => void poll(), 2000);
    };

    const handle = openSse(`/osm/api/runs/${encodeURIComponent(runId)}/logs`, {
      endEvent: 'end',
      onOpen: () => setMode('live'),
      onDrop: () => setMode('connecting'),
      onUnsupported: () => {
        setMode('polling');
        void poll();
      },
      onMessage: (m) => {
        let j: Record<string, unknown>;
        try {
          j = JSON.parse(m.data) as Record<string, unknown>;
        } catch {
          return;
        }
        if (m.event === 'line') {
          // A parallel-steps child's line is prefixed with its name, as in the terminal.
          const part = typeof j.substep === 'string' && j.substep ? `[${j.substep}] ` : '';
          buffer.push([{ step: String(j.step ?? ''), stream: j.stream === 'stderr' ? 'stderr' : 'stdout', line: part + String(j.line ?? ''), ts: typeof j.ts === 'string' ? j.ts : undefined }]);
        } else if (m.event === 'step') {
          saved.current.onStep({ step: String(j.step ?? ''), status: String(j.status ?? ''), exit_code: typeof j.exit_code === 'number' ? j.exit_code : undefined, duration_ms: typeof j.duration_ms === 'number' ? j.duration_ms : undefined });
        } else if (m.event === 'end') {
          setMode('ended');
          saved.current.onEnd(String(j.status ?? ''));
        }
      },
    });
    return () => {
      stopped = true;
      handle.close();
      if (timer) clearTimeout(timer);
    };
  }, [runId, buffer]);

  return { buffer, mode };
}
