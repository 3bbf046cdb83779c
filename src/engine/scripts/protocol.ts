/** Messages between the engine and its script worker threads. */

/** The parts of a function context that cross the thread boundary (the store is reopened by path). */
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
  /** The database file the worker opens for database functions. */
  dbPath?: string;
  /** Plain settings (notification webhooks for notify_* / generate_event). */
  settings?: unknown;
}

export interface ScriptRequest {
  id: number;
  script: string;
  vars: Record<string, unknown>;
  ctx: WorkerFnContext;
  timeoutMs: number;
}

export type ScriptReply =
  | { id: number; t: 'log'; line: string }
  | { id: number; t: 'done'; ok: true; value: unknown }
  | { id: number; t: 'done'; ok: false; skip: boolean; message: string; code?: string };
