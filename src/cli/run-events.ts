/**
 * `osm run --json`: one JSON object per line for each run and step event as it happens, then the
 * final run record (or array of records) as the last line. The shapes are documented in
 * docs/cli-json.md and stay stable: fields may be added, never renamed or removed.
 */
import type { LiveEvent } from '../engine/live/run-output.js';

export type RunJsonEvent =
  | { event: 'run.started'; ts: string; run_uuid: string; workflow: string; target: string; workspace: string }
  | { event: 'step.started'; ts: string; run_uuid: string; step: string; type: string; module: string }
  | { event: 'output'; ts: string; run_uuid: string; step: string; substep?: string; stream: 'stdout' | 'stderr'; line: string }
  | { event: 'step.finished'; ts: string; run_uuid: string; step: string; status: string; exit_code: number | null; duration_ms: number }
  | { event: 'run.finished'; ts: string; run_uuid: string; status: string; duration_ms: number; error?: string };

/** Writes one event as a line. */
export function writeJsonEvent(e: RunJsonEvent, write: (text: string) => void = (t) => process.stdout.write(t)): void {
  write(`${JSON.stringify(e)}\n`);
}

/** The JSON event of a live engine event of run `runUuid` (undefined for none). */
export function jsonEventOf(runUuid: string, e: LiveEvent): RunJsonEvent | undefined {
  const ts = new Date(e.ts).toISOString();
  if (e.kind === 'line') return { event: 'output', ts, run_uuid: runUuid, step: e.step, ...(e.part ? { substep: e.part } : {}), stream: e.stream, line: e.line };
  if (e.kind === 'step') {
    if (e.status === 'running') return { event: 'step.started', ts, run_uuid: runUuid, step: e.step, type: e.step_type ?? '', module: e.module ?? '' };
    return { event: 'step.finished', ts, run_uuid: runUuid, step: e.step, status: e.status, exit_code: e.exit_code, duration_ms: e.duration_ms };
  }
  if (e.status === 'running') return { event: 'run.started', ts, run_uuid: e.run_uuid, workflow: e.workflow, target: e.target, workspace: e.workspace };
  return { event: 'run.finished', ts, run_uuid: e.run_uuid, status: e.status, duration_ms: e.duration_ms ?? 0, ...(e.error ? { error: e.error } : {}) };
}

/** A listener printing a run's live events as JSON lines on stdout. */
export function jsonEventListener(runUuid: string): (e: LiveEvent) => void {
  return (e) => {
    const j = jsonEventOf(runUuid, e);
    if (j) writeJsonEvent(j);
  };
}
