/** Messages between the engine (or the API) and its script evaluator processes. */
import type { OutboundPolicy } from '../../util/outbound.js';
import type { LayerSpec } from '../../scope/index.js';
import type { DbLocator } from '../../store/locator.js';

/** The parts of a function context that cross the process boundary (the store is reopened by path). */
export interface WorkerFnContext {
  workspace?: string;
  runUuid?: string;
  dbRunId?: number;
  workflowName?: string;
  workflowKind?: string;
  target?: string;
  output?: string;
  stateFile?: string;
  cwd?: string;
  /** The database the evaluator opens for database functions (SQLite file or PostgreSQL URL). */
  db?: DbLocator;
  /** The SQLite database file (the older form of `db: { engine: 'sqlite', path }`). */
  dbPath?: string;
  /** Plain settings (notification webhooks for notify_* / generate_event). */
  settings?: unknown;
  /** When set, the http functions may only reach what this policy allows (API evaluations). */
  outbound?: OutboundPolicy;
  /** The run's target scope layers (imports drop and count rows out of scope). */
  scope?: LayerSpec[];
}

export interface ScriptRequest {
  id: number;
  script: string;
  vars: Record<string, unknown>;
  ctx: WorkerFnContext;
  timeoutMs: number;
  /** 'value': the script's value; 'condition': its JS truthiness (variables bound lazily). */
  mode: 'value' | 'condition';
}

export type ScriptReply =
  | { t: 'ready' }
  | { id: number; t: 'log'; line: string }
  | { id: number; t: 'done'; ok: true; value: unknown }
  | { id: number; t: 'done'; ok: false; skip: boolean; message: string; code?: string; timedOut: boolean };
