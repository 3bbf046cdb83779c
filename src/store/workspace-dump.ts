/**
 * A workspace's database rows as plain rows, table by table (snapshot export), and their restore
 * under a (possibly new) name in one transaction (snapshot import). Export pages by rowid with
 * short separate statements, so nothing holds the connection between pages (the daemon keeps
 * serving while a zip is streamed). Restore re-assigns every id: runs keep their run_uuid, steps,
 * artifacts, diffs and history are re-linked to the new ids, and rows are marked as imported.
 * Imported rows are data, never work: unfinished runs and steps are closed, run options are
 * dropped, events are marked processed (a replay at start-up must not trigger workflows from a
 * snapshot), and stored paths that do not lie inside the new workspace folder are cleared. Tables
 * that hold work (schedules, webhook templates, the workflow index) are never dumped nor restored.
 */
import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { isInside } from '../util/fs-safe.js';
import { errors } from '../errors.js';
import { vulnFingerprint } from './vulns.js';
import { DIFF_SNAPSHOT_TABLES } from './asset-diffs.js';
import { nowIso, type Db, type Row, type StatementCache } from './sql.js';

/** The dumped tables, in restore order (parents before children). */
export const DUMP_TABLES = [
  'workspace', 'runs', 'step_results', 'artifacts', 'assets', 'vulnerabilities', 'asset_diffs', 'vuln_diffs', 'event_logs', 'asset_history', 'vuln_history',
] as const;
export type DumpTable = (typeof DUMP_TABLES)[number];

/** Which rows of each table belong to workspace `?` (every `?` is bound to the name). */
export const DUMP_SELECTION: Record<DumpTable, { table: string; where: string }> = {
  workspace: { table: 'workspaces', where: 'name = ?' },
  runs: { table: 'runs', where: 'workspace = ?' },
  step_results: { table: 'step_results', where: 'run_id IN (SELECT id FROM runs WHERE workspace = ?)' },
  artifacts: { table: 'artifacts', where: '(workspace = ? OR run_id IN (SELECT id FROM runs WHERE workspace = ?))' },
  assets: { table: 'assets', where: 'workspace = ?' },
  vulnerabilities: { table: 'vulnerabilities', where: 'workspace = ?' },
  asset_diffs: { table: 'asset_diffs', where: 'workspace_name = ?' },
  vuln_diffs: { table: 'vuln_diffs', where: 'workspace_name = ?' },
  event_logs: { table: 'event_logs', where: 'workspace = ?' },
  asset_history: { table: 'asset_history', where: 'workspace = ?' },
  vuln_history: { table: 'vuln_history', where: 'workspace = ?' },
};

/** Columns a restore never copies: the server assigns them (ids) or derives them (trigger-kept counters). */
const SKIPPED: Partial<Record<DumpTable, string[]>> = {
  workspace: ['id', 'name', 'data_source', 'local_path', 'total_assets', 'total_vulns', 'vuln_critical', 'vuln_high', 'vuln_medium', 'vuln_low', 'vuln_info', 'org_uuid'],
};

export interface DumpPage {
  rows: Row[];
  /** Pass back as `after` for the next page; the dump of a table is done when rows is empty. */
  last: number;
}

/** Per-table row counts of a restore. */
export type RestoreCounts = Record<DumpTable, number>;

export interface RestoreOptions {
  /** The workspace folder the rows now belong to (replaces the old folder prefix in stored paths). */
  localPath: string;
  /** Delete the workspace's current rows first (import with force). */
  replace: boolean;
}

/** Rows of one table, read lazily (a JSONL file of the snapshot). */
export type DumpSource = (table: DumpTable) => Iterable<Row>;

/** One page of a workspace's rows of `table`, rowid order, after rowid `after`. */
export function dumpPage(q: StatementCache, name: string, table: DumpTable, after: number, limit: number): DumpPage {
  const sel = DUMP_SELECTION[table];
  const binds = sel.where.split('?').length - 1;
  // NOT INDEXED keeps this a rowid range walk: one pass over the table for the whole dump, no sort.
  const rows = q(`SELECT rowid AS "__rowid__", * FROM ${sel.table} NOT INDEXED WHERE rowid > ? AND ${sel.where} ORDER BY rowid LIMIT ?`).all(
    after,
    ...Array<string>(binds).fill(name),
    Math.max(1, Math.trunc(limit)),
  ) as Row[];
  const last = rows.length > 0 ? Number(rows[rows.length - 1]!.__rowid__) : after;
  for (const r of rows) delete r.__rowid__;
  return { rows, last };
}

/**
 * One database step of a restore, run by the engine's driver (restorePlan yields them): `get` a
 * row (positional), `insert` a row (named; the new id when `returnId`), `upsert` (named, no
 * result), `columns` of a table, `deleteData` of a workspace.
 */
export type RestoreOp =
  | { op: 'get'; sql: string; params: unknown[] }
  | { op: 'insert'; table: string; values: Row; returnId: boolean }
  | { op: 'upsert'; sql: string; values: Row }
  | { op: 'columns'; table: string }
  | { op: 'deleteData'; name: string };

/** The INSERT of one restored row (named parameters `values`). */
export function restoreInsertSql(table: string, values: Row): string {
  const keys = Object.keys(values);
  return `INSERT INTO ${table} (${keys.join(', ')}) VALUES (${keys.map((k) => `@${k}`).join(', ')})`;
}

/**
 * The restore of dumped rows as workspace `name`, engine-neutral: a generator of RestoreOps whose
 * results the driver sends back (see restoreDump for SQLite, src/store/pg/repos/workspaces.ts for
 * PostgreSQL); the driver runs it in one transaction, so any bad row rolls everything back.
 */
export function* restorePlan(name: string, source: DumpSource, opts: RestoreOptions): Generator<RestoreOp, RestoreCounts, unknown> {
  const columnsOf = new Map<string, Set<string>>();
  function* columns(table: string): Generator<RestoreOp, Set<string>, unknown> {
    let set = columnsOf.get(table);
    if (!set) {
      set = (yield { op: 'columns', table }) as Set<string>;
      columnsOf.set(table, set);
    }
    return set;
  }
  const counts = Object.fromEntries(DUMP_TABLES.map((t) => [t, 0])) as RestoreCounts;
  const runIds = new Map<number, number>();
  const assetIds = new Map<number, number>();
  const vulnIds = new Map<number, number>();

  if (opts.replace) yield { op: 'deleteData', name };
  // Rows kept from before (no replace) stay in the row's org, so then the dump cannot move it.
  const adoptOrg = opts.replace || !(yield { op: 'get', sql: 'SELECT 1 AS x FROM workspaces WHERE name = ?', params: [name] });
  const oldPrefix = yield* restoreWorkspaceRow(columns, name, source('workspace'), opts.localPath, counts, adoptOrg);
  const movePath = (p: unknown) => rebase(p, oldPrefix, opts.localPath);
  // Restored rows belong to the org of the workspace's row, never to an org named by the dump.
  const org = { org_uuid: ((yield { op: 'get', sql: 'SELECT org_uuid FROM workspaces WHERE name = ?', params: [name] }) as { org_uuid: string }).org_uuid };

  function* insert(table: DumpTable, row: Row, patch: Row): Generator<RestoreOp, number, unknown> {
    const cols = yield* columns(DUMP_SELECTION[table].table);
    const skipped = new Set(['id', ...(SKIPPED[table] ?? [])]);
    const values: Row = {};
    for (const [k, v] of Object.entries(row)) if (cols.has(k) && !skipped.has(k)) values[k] = bindable(v);
    Object.assign(values, patch);
    const id = (yield { op: 'insert', table: DUMP_SELECTION[table].table, values, returnId: table === 'runs' || table === 'assets' || table === 'vulnerabilities' }) as number;
    counts[table]++;
    return id;
  }

  for (const r of source('runs')) runIds.set(num(r.id), yield* insert('runs', r, { workspace: name, ...inertRun(r), ...org }));
  for (const r of source('step_results')) {
    const runId = runIds.get(num(r.run_id));
    if (runId !== undefined) yield* insert('step_results', r, { run_id: runId, workspace: name, log_file: movePath(r.log_file), ...inertStep(r) });
  }
  for (const r of source('artifacts')) {
    yield* insert('artifacts', r, { id: randomUUID(), run_id: runIds.get(num(r.run_id)) ?? 0, workspace: name, artifact_path: movePath(r.artifact_path) });
  }
  for (const r of source('assets')) assetIds.set(num(r.id), yield* insert('assets', r, { workspace: name, ...org }));
  for (const r of source('vulnerabilities')) {
    const fingerprint = r.fingerprint === null || r.fingerprint === undefined ? null : vulnFingerprint(name, r as Record<string, string>);
    vulnIds.set(num(r.id), yield* insert('vulnerabilities', r, { workspace: name, fingerprint, ...org }));
  }
  for (const table of DIFF_SNAPSHOT_TABLES) {
    for (const r of source(table)) yield* insert(table, r, { workspace_name: name, run_id: runIds.get(num(r.run_id)) ?? 0 });
  }
  for (const r of source('event_logs')) {
    yield* insert('event_logs', r, { workspace: name, processed: 1, processed_at: typeof r.processed_at === 'string' && r.processed_at ? r.processed_at : nowIso() });
  }
  for (const r of source('asset_history')) {
    const id = assetIds.get(num(r.asset_id));
    if (id !== undefined) yield* insert('asset_history', r, { asset_id: id, workspace: name });
  }
  for (const r of source('vuln_history')) {
    const id = vulnIds.get(num(r.vuln_id));
    if (id !== undefined) yield* insert('vuln_history', r, { vuln_id: id, workspace: name });
  }
  return counts;
}

/** Restores dumped rows as workspace `name` in one IMMEDIATE transaction; any bad row rolls everything back. */
export function restoreDump(db: Db, q: StatementCache, name: string, source: DumpSource, opts: RestoreOptions, deleteData: (n: string) => void): RestoreCounts {
  return db.transaction(() => {
    const plan = restorePlan(name, source, opts);
    let step = plan.next();
    while (!step.done) {
      const op = step.value;
      let result: unknown;
      if (op.op === 'get') result = q(op.sql).get(...op.params);
      else if (op.op === 'insert') result = Number(q(restoreInsertSql(op.table, op.values)).run(op.values).lastInsertRowid);
      else if (op.op === 'upsert') q(op.sql).run(op.values);
      else if (op.op === 'columns') result = new Set((db.prepare(`PRAGMA table_info(${op.table})`).all() as { name: string }[]).map((c) => c.name));
      else deleteData(op.name);
      step = plan.next(result);
    }
    return step.value;
  }).immediate();
}

/** Creates or updates the workspace row (data_source imported); returns the old local_path of the dump. */
function* restoreWorkspaceRow(
  columns: (t: string) => Generator<RestoreOp, Set<string>, unknown>,
  name: string,
  rows: Iterable<Row>,
  localPath: string,
  counts: RestoreCounts,
  adoptOrg: boolean,
): Generator<RestoreOp, string, unknown> {
  let dumped: Row | undefined;
  for (const r of rows) {
    if (dumped) throw errors.validation('workspace.jsonl: more than one row');
    dumped = r;
  }
  const oldPrefix = typeof dumped?.local_path === 'string' ? dumped.local_path : '';
  const now = nowIso();
  const values: Row = { name, data_source: 'imported', local_path: localPath, created_at: now, updated_at: now };
  if (dumped) {
    const cols = yield* columns('workspaces');
    const skipped = new Set(SKIPPED.workspace);
    for (const [k, v] of Object.entries(dumped)) if (cols.has(k) && !skipped.has(k)) values[k] = bindable(v);
    for (const k of ['state_execution_log', 'state_completed_file', 'state_workflow_file']) if (k in values) values[k] = rebase(values[k], oldPrefix, localPath);
    // The dump's org is kept only when this database has it; otherwise the row keeps its org (or gets the default).
    if (adoptOrg && typeof dumped.org_uuid === 'string' && (yield { op: 'get', sql: 'SELECT 1 AS x FROM orgs WHERE uuid = ?', params: [dumped.org_uuid] })) values.org_uuid = dumped.org_uuid;
    values.updated_at = now;
    counts.workspace = 1;
  }
  const keys = Object.keys(values);
  const updates = keys.filter((k) => k !== 'name' && k !== 'created_at');
  yield {
    op: 'upsert',
    sql: `INSERT INTO workspaces (${keys.join(', ')}) VALUES (${keys.map((k) => `@${k}`).join(', ')})
     ON CONFLICT (name) DO UPDATE SET ${updates.map((k) => `${k} = excluded.${k}`).join(', ')}`,
    values,
  };
  return oldPrefix;
}

/**
 * An imported run never becomes executable or claims a process here: one that was still pending,
 * queued or running when exported is restored as cancelled (the queue would otherwise run it), and
 * its options (workflow file, workspaces folder, engine flags) are dropped — a duplicate or resume
 * of it starts from the installed workflow of its name and the request's own checks.
 */
function inertRun(r: Row): Row {
  const patch: Row = { current_pid: 0, current_pid_start: '', owner_pid: 0, owner_host: '', options: '{}' };
  if (!['completed', 'failed', 'cancelled'].includes(String(r.status))) {
    patch.status = 'cancelled';
    patch.error_message = `imported from a snapshot while ${String(r.status)}`;
    patch.completed_at = typeof r.completed_at === 'string' ? r.completed_at : nowIso();
  }
  return patch;
}

/** Steps of an imported run cannot still be pending or running. */
function inertStep(r: Row): Row {
  if (r.status !== 'pending' && r.status !== 'running') return {};
  return { status: 'failed', error_message: `imported from a snapshot while ${String(r.status)}`, completed_at: typeof r.completed_at === 'string' ? r.completed_at : nowIso() };
}

/** A JSON value as a SQLite parameter: booleans as 0/1, objects as JSON text. */
function bindable(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  if (v === undefined) return null;
  return v;
}

function num(v: unknown): number {
  const n = Number(v);
  return Number.isFinite(n) ? n : -1;
}

/**
 * Moves a stored path from the old workspace folder to the new one; a path that then does not lie
 * inside the new folder (a snapshot may name any file) becomes ''.
 */
function rebase(p: unknown, oldPrefix: string, newPrefix: string): unknown {
  if (typeof p !== 'string' || p === '') return p;
  let moved = p;
  if (oldPrefix !== '' && oldPrefix !== newPrefix) {
    if (p === oldPrefix) moved = newPrefix;
    else if (p.startsWith(`${oldPrefix}/`)) moved = newPrefix + p.slice(oldPrefix.length);
  }
  return isAbsolute(moved) && isAbsolute(newPrefix) && isInside(newPrefix, moved) ? moved : '';
}
