/**
 * The run's output journal (`<workspace>/logs/<run_uuid>/output.journal`): an index, in the order
 * they happened, of every batch of lines written to the run's step log files and of every step
 * state change. The log files keep the output itself (as the tools wrote it, whole lines); the
 * journal says which step and stream each range of bytes came from, and numbers everything with
 * one sequence (`seq`) per run, the cursor of the log streams (`Last-Event-ID`) and of `osm logs`.
 *
 * One record per line:
 *   F <file> <name> <step-json>                       a step log file (its name in the folder) and its step
 *   L <seq> <file> <o|e> <start> <end> <count> <ms> [<substep-json>]
 *                                                     `count` lines (seq … seq+count-1) at bytes [start, end);
 *                                                     the optional last field names the parallel-steps child
 *                                                     that wrote them (journals of older osm versions lack it)
 *   S <seq> <ms> <json>                               a step state change {step,status,exit_code,duration_ms,…}
 * Everything read back is checked: a journal may come from an imported snapshot.
 */
import { isSafeName } from '../../util/fs-safe.js';

export const JOURNAL_FILE = 'output.journal';

export type StreamName = 'stdout' | 'stderr';

export interface FileRecord {
  type: 'F';
  file: number;
  name: string;
  step: string;
}

export interface LinesRecord {
  type: 'L';
  seq: number;
  file: number;
  stream: StreamName;
  start: number;
  end: number;
  count: number;
  ts: number;
  /** The parallel-steps child that wrote the lines (`left`, `outer/inner`); absent for the step itself. */
  part?: string;
}

export interface StepState {
  step: string;
  status: 'running' | 'completed' | 'failed' | 'skipped';
  exit_code: number | null;
  duration_ms: number;
  /** Step type and module (for `osm run --json`). */
  step_type?: string;
  module?: string;
}

export interface StepRecord extends StepState {
  type: 'S';
  seq: number;
  ts: number;
}

export type JournalRecord = FileRecord | LinesRecord | StepRecord;

const STEP_STATUSES = new Set(['running', 'completed', 'failed', 'skipped']);

/** The text of one record (with its newline). */
export function formatFile(file: number, name: string, step: string): string {
  return `F ${file} ${name} ${JSON.stringify(step)}\n`;
}

export function formatLines(r: Omit<LinesRecord, 'type'>): string {
  const part = r.part ? ` ${JSON.stringify(r.part)}` : '';
  return `L ${r.seq} ${r.file} ${r.stream === 'stderr' ? 'e' : 'o'} ${r.start} ${r.end} ${r.count} ${r.ts}${part}\n`;
}

/** Longest substep name read back (a child path of nested parallel-steps). */
const MAX_PART = 1024;

export function formatStep(seq: number, ts: number, s: StepState): string {
  return `S ${seq} ${ts} ${JSON.stringify(s)}\n`;
}

const nat = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
};

/** Parses one record; undefined for anything malformed (it is skipped). */
export function parseRecord(line: string): JournalRecord | undefined {
  const kind = line[0];
  if (kind === 'L') {
    const p = line.split(' ');
    if (p.length < 8) return undefined;
    // The substep is JSON (a name may hold spaces): everything after the eighth field.
    let part: string | undefined;
    if (p.length > 8) {
      part = parseJsonString(p.slice(8).join(' '));
      if (!part || part.length > MAX_PART) return undefined;
    }
    const [seq, file, start, end, count, ts] = [nat(p[1]), nat(p[2]), nat(p[4]), nat(p[5]), nat(p[6]), nat(p[7])];
    if (seq === undefined || file === undefined || start === undefined || end === undefined || count === undefined || ts === undefined) return undefined;
    if ((p[3] !== 'o' && p[3] !== 'e') || end < start || count < 1) return undefined;
    return { type: 'L', seq, file, stream: p[3] === 'e' ? 'stderr' : 'stdout', start, end, count, ts, ...(part ? { part } : {}) };
  }
  if (kind === 'F') {
    const m = /^F (\d{1,9}) (\S+) (".*")$/.exec(line);
    if (!m || !isSafeName(m[2]!)) return undefined;
    const step = parseJsonString(m[3]!);
    return step === undefined ? undefined : { type: 'F', file: Number(m[1]), name: m[2]!, step };
  }
  if (kind === 'S') {
    const m = /^S (\d{1,15}) (\d{1,15}) (\{.*\})$/.exec(line);
    if (!m) return undefined;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(m[3]!) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    if (!v || typeof v.step !== 'string' || typeof v.status !== 'string' || !STEP_STATUSES.has(v.status)) return undefined;
    const exit = typeof v.exit_code === 'number' && Number.isInteger(v.exit_code) ? v.exit_code : null;
    const duration = typeof v.duration_ms === 'number' && v.duration_ms >= 0 ? Math.round(v.duration_ms) : 0;
    return {
      type: 'S',
      seq: Number(m[1]),
      ts: Number(m[2]),
      step: v.step,
      status: v.status as StepState['status'],
      exit_code: exit,
      duration_ms: duration,
      ...(typeof v.step_type === 'string' ? { step_type: v.step_type } : {}),
      ...(typeof v.module === 'string' ? { module: v.module } : {}),
    };
  }
  return undefined;
}

function parseJsonString(text: string): string | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Number of sequence numbers a record takes. */
export function seqSpan(r: JournalRecord): number {
  return r.type === 'L' ? r.count : r.type === 'S' ? 1 : 0;
}
