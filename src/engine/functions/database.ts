/**
 * The database category of the function library (reference §10.2), on the store the engine puts
 * in `ctx.store`. Everything is synchronous (the JS runtime is) and never throws: failures answer
 * the reference's values — `false`, `0`, or a string `"error: <message>"` (stats objects carry an
 * `error` field). Imports go through the same importers as the CLI and API (src/ingest), reading
 * files in fixed-size chunks so memory stays flat.
 *
 * Deviations, on purpose: `db_select*` run on a read-only connection (a crafted SELECT cannot
 * write); `db_total_assets/vulns` and `db_vuln_*` do not add line counts to counters the store
 * keeps exact from the tables (that would double count imported rows) — they return the exact
 * value; `db_quick_import_asset` records `asset.discovered` (the spec's topic) for new assets.
 */
import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DATABASE_UNAVAILABLE, type FnImpl } from './registry.js';
import { importScopeOf } from './scope-import.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, isMissing, optStr, writeText } from './helpers.js';
import { contentTypeOf } from '../state-files.js';
import { messageOf } from '../../errors.js';
import type { AssetInput, Store, VulnInput } from '../../store/index.js';
import { FILE_COUNTERS, type FileCounter, type WorkspaceCounter } from '../../store/workspaces.js';
import { atomicWriteFile } from '../../util/fs-safe.js';
import { assetRecordToInput, classifyAsset, computeAssetDiff, computeVulnDiff, customKind, httpxKind, httpxToAsset, isNucleiRecord, looksLikeHttpx, nucleiKind, nucleiToVuln, RecordImporter, runSync, vulnRecordToInput, type ImportKind, type ImportStats } from '../../ingest/index.js';
import { assetUpsert, vulnUpsert } from '../../ingest/importer.js';
import { forEachLineSync } from '../../ingest/lines.js';
import { accept, asObject, reject, str } from '../../ingest/records.js';
import { formatRows, jsonlText, markdownTable, rowFormat } from '../../ingest/format.js';

const MAX_ROWS = 1000;
const err = (msg: string) => `error: ${msg}`;

/** The store of the evaluation, when the engine (or a test) provided one. */
function storeOf(ctx: FnContext): Store | undefined {
  const s = ctx.store as Store | undefined;
  return s && typeof s === 'object' && 'assets' in s && 'workspaces' in s ? s : undefined;
}

/** A JSON object argument: an object, or JSON text of one. */
function jsonArg(v: unknown): Record<string, unknown> | undefined {
  if (typeof v === 'string') {
    try {
      return asObject(JSON.parse(v));
    } catch {
      return undefined;
    }
  }
  return asObject(v);
}

function eventOpts(ctx: FnContext) {
  const scope = importScopeOf(ctx, 'import');
  return { runUuid: ctx.runUuid, workflowName: ctx.workflowName, ...(scope ? { scope } : {}) };
}

/** Asset records in the API's shape or httpx's. */
const anyAsset: ImportKind<AssetInput>['map'] = (r, raw) => (looksLikeHttpx(r) ? httpxToAsset(r, raw) : assetRecordToInput(r, raw));

/** Imports one record; true when it was stored (new, updated or unchanged). */
function importOne<T>(ctx: FnContext, store: Store, ws: string, kind: ImportKind<T>, record: Record<string, unknown>): boolean {
  const imp = new RecordImporter(store, ws, kind, { ...eventOpts(ctx), summaryEvent: false });
  imp.record(0, record);
  const s = imp.finish();
  return s.errors === 0 && s.skipped === 0 && s.new + s.updated + s.unchanged === 1;
}

/** A value-only asset (quick/partial imports): typed, matched on (workspace, asset_value). */
function valueKind(type: string): ImportKind<AssetInput> {
  return {
    kind: 'asset',
    map: (r) => {
      const value = str(r.asset_value);
      return value ? accept({ asset_value: value, asset_type: type || classifyAsset(value) }) : reject('asset_value: required');
    },
    upsert: assetUpsert(true),
  };
}

/** The stats shape of an import that could not run. */
function failedStats(message: string): Record<string, unknown> {
  return { new: 0, updated: 0, unchanged: 0, errors: 0, skipped: 0, total: 0, error_lines: [], error: message };
}

/** A stats object, or the same shape with an error when the import could not run. */
function statsOr(fn: () => ImportStats): Record<string, unknown> {
  try {
    return { ...fn() };
  } catch (e) {
    return failedStats(messageOf(e));
  }
}

const MISSING_ARGS = 'workspace, file_path and a database are required';

/** Non-blank lines of a file, or -1 when unreadable. */
function nonBlankCount(path: string): number {
  let n = 0;
  try {
    forEachLineSync(path, (_no, text) => {
      if (text === null || text.trim() !== '') n++;
    });
    return n;
  } catch {
    return -1;
  }
}

/** db_total_* / db_vuln_*: add the file's line count to a file counter ('0' resets); exact counters are only read. */
function counterFn(counter: WorkspaceCounter): FnImpl {
  return (ctx, p) => {
    const store = storeOf(ctx);
    const ws = ctx.workspace;
    if (!store || !ws) return 0;
    try {
      if (!(FILE_COUNTERS as readonly string[]).includes(counter)) return store.workspaces.counter(ws, counter);
      if (p === 0 || p === '0') return store.workspaces.addToCounter(ws, counter as FileCounter, 0, true);
      const path = argStr(p);
      if (path === null) return 0;
      const n = nonBlankCount(path);
      return n < 0 ? store.workspaces.counter(ws, counter) : store.workspaces.addToCounter(ws, counter as FileCounter, n);
    } catch {
      return 0;
    }
  };
}

/** db_select_total_* / db_select_vuln_*: one counter of the current workspace. */
function readCounterFn(counter: WorkspaceCounter): FnImpl {
  return (ctx) => {
    const store = storeOf(ctx);
    return store && ctx.workspace ? store.workspaces.counter(ctx.workspace, counter) : 0;
  };
}

const ASSET_COLUMNS = ['id', 'asset_value', 'url', 'status_code', 'title', 'asset_type', 'tech', 'host_ip', 'source', 'last_seen_at'];
const VULN_COLUMNS = ['id', 'severity', 'vuln_info', 'vuln_title', 'asset_value', 'confidence', 'tags', 'created_at'];

function selectAssets(store: Store, filter: { workspace: string; status_code?: number; asset_type?: string; search?: string }, format: unknown): string {
  const rows = store.assets.list(filter, { offset: 0, limit: MAX_ROWS }).data.map(({ raw_json_data: _raw, ...rest }) => rest);
  return formatRows(rows, rowFormat(format), ASSET_COLUMNS);
}

function selectVulns(store: Store, filter: { workspace: string; severity?: string[]; asset_value?: string }, format: unknown): string {
  const rows = store.vulns
    .list(filter, { offset: 0, limit: MAX_ROWS })
    .data.map(({ raw_vuln_json: _r, detail_http_request: _q, detail_http_response: _s, ...rest }) => rest);
  return formatRows(rows, rowFormat(format), VULN_COLUMNS);
}

const FORBIDDEN = ['INSERT', 'UPDATE', 'DELETE', 'DROP', 'CREATE', 'ALTER', 'TRUNCATE', 'GRANT', 'REVOKE', 'EXECUTE', 'EXEC', 'REPLACE', 'ATTACH', 'DETACH', 'PRAGMA', 'VACUUM', 'LOAD_FILE', 'LOAD_EXTENSION'];

/** The reference's SELECT-only screen (keywords as whole words); the read-only connection is the real guard. */
function screenSelect(sql: string): string | undefined {
  const text = sql.trim().replace(/;\s*$/, '');
  const upper = text.toUpperCase();
  if (!upper.startsWith('SELECT') && !upper.startsWith('WITH')) return 'only SELECT queries are allowed';
  for (const k of FORBIDDEN) if (new RegExp(`\\b${k}\\b`).test(upper)) return `forbidden keyword: ${k}`;
  if (/INTO\s+(OUTFILE|DUMPFILE)/.test(upper)) return 'forbidden keyword: INTO OUTFILE';
  if (text.includes(';')) return 'multiple statements are not allowed';
  if (text.includes('--') || text.includes('/*')) return 'comments are not allowed';
  return undefined;
}

/** Runs a screened SELECT read-only; a string answer is an error message. */
function select(ctx: FnContext, sqlArg: unknown): { columns: string[]; rows: Record<string, unknown>[] } | string {
  const store = storeOf(ctx);
  const sql = argStr(sqlArg);
  if (!store) return DATABASE_UNAVAILABLE;
  if (sql === null) return err('sql is required');
  const bad = screenSelect(sql);
  if (bad) return err(bad);
  try {
    return store.maintenance.readOnlyQuery(sql.trim().replace(/;\s*$/, ''), MAX_ROWS);
  } catch (e) {
    return err(messageOf(e));
  }
}

/**
 * The reference's diff window of a workspace: from its beginning (the earliest of the workspace
 * row and its oldest asset or finding; else the last day) until now.
 */
function diffWindow(store: Store, ws: string): { from: string; to: string } {
  const starts = [store.workspaces.get(ws)?.created_at, store.assets.oldestCreatedAt(ws), store.vulns.oldestCreatedAt(ws)].filter((t): t is string => Boolean(t));
  const from = starts.length > 0 ? starts.sort()[0]! : new Date(Date.now() - 86_400_000).toISOString();
  return { from, to: new Date().toISOString() };
}

function diffLines(kind: 'asset' | 'vuln', store: Store, ws: string): string {
  const { from, to } = diffWindow(store, ws);
  const d = kind === 'asset' ? computeAssetDiff(store, ws, from, to) : computeVulnDiff(store, ws, from, to);
  const lines: unknown[] = [];
  for (const diff_type of ['added', 'removed', 'changed'] as const) {
    for (const item of d[diff_type] as object[]) lines.push({ diff_type, workspace_name: ws, ...item });
  }
  return jsonlText(lines);
}

function withStore<T>(ctx: FnContext, failure: T, fn: (store: Store) => T): T {
  const store = storeOf(ctx);
  if (!store) return failure;
  try {
    return fn(store);
  } catch {
    return failure;
  }
}

/** Size and non-blank line count of a file or folder. */
function fileFacts(path: string): { size: number; lines: number; dir: boolean } | undefined {
  try {
    const st = statSync(path);
    if (st.isDirectory()) return { size: 0, lines: 0, dir: true };
    return { size: st.size, lines: Math.max(0, nonBlankCount(path)), dir: false };
  } catch {
    return undefined;
  }
}

const ARTIFACT_TYPES = ['text', 'jsonl', 'markdown', 'html'];

/** Unix time in nanoseconds (the reference's artifact ids); the sub-millisecond part from the monotonic clock. */
function unixNanos(): bigint {
  return BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
}

export const databaseFunctions: Record<string, FnImpl> = {
  db_import_asset: (ctx, w, json) => {
    const ws = argStr(w);
    const rec = jsonArg(json);
    return ws !== null && rec !== undefined && withStore(ctx, false, (s) => importOne(ctx, s, ws, { kind: 'asset', map: anyAsset, upsert: assetUpsert() }, rec));
  },
  db_quick_import_asset: (ctx, w, value, type) => {
    const ws = argStr(w);
    const v = argStr(value);
    return ws !== null && v !== null && withStore(ctx, false, (s) => importOne(ctx, s, ws, valueKind(optStr(type)), { asset_value: v }));
  },
  db_partial_import_asset: (ctx, w, type, value) => {
    const ws = argStr(w);
    const v = argStr(value);
    return ws !== null && v !== null && withStore(ctx, false, (s) => importOne(ctx, s, ws, valueKind(optStr(type)), { asset_value: v }));
  },
  db_partial_import_asset_file: (ctx, w, type, file) => {
    const ws = argStr(w);
    const path = argStr(file);
    if (ws === null || path === null) return 0;
    return withStore(ctx, 0, (s) => {
      const imp = new RecordImporter(s, ws, valueKind(optStr(type)), { ...eventOpts(ctx), file: path });
      forEachLineSync(path, (no, text) => {
        if (text !== null && text.trim() !== '') imp.record(no, { asset_value: text.trim() });
      });
      const st = imp.finish();
      return st.new + st.updated + st.unchanged;
    });
  },
  db_raw_insert_asset: (ctx, w, json) => {
    const ws = argStr(w);
    const rec = jsonArg(json);
    if (ws === null || rec === undefined) return 0;
    const mapped = anyAsset(rec, JSON.stringify(rec));
    return mapped.ok ? withStore(ctx, 0, (s) => s.assets.insert(ws, mapped.value).id) : 0;
  },
  db_query_assets: (ctx, w, filter) => {
    const ws = argStr(w);
    if (ws === null) return err('workspace is required');
    const obj = jsonArg(filter);
    const f = obj
      ? { workspace: ws, asset_type: str(obj.asset_type) || undefined, status_code: Number(obj.status_code) || undefined, search: str(obj.search) || undefined }
      : { workspace: ws, search: isMissing(filter) ? undefined : optStr(filter) };
    return withStore(ctx, DATABASE_UNAVAILABLE, (s) => selectAssets(s, f, 'jsonl'));
  },
  db_update_workspace_stats: (ctx, w) => {
    const ws = argStr(w) ?? ctx.workspace ?? null;
    return ws !== null && withStore(ctx, false, (s) => s.workspaces.recomputeCounters(ws) !== undefined);
  },
  db_import_asset_from_file: (ctx, w, file, source) => {
    const ws = argStr(w);
    const path = argStr(file);
    if (!storeOf(ctx) || ws === null || path === null) return failedStats(MISSING_ARGS);
    return statsOr(() => runSync(storeOf(ctx)!, ws, path, httpxKind({ source: optStr(source) || undefined }), eventOpts(ctx)));
  },
  db_import_custom_asset: (ctx, w, file, type, source) => {
    const ws = argStr(w);
    const path = argStr(file);
    if (!storeOf(ctx) || ws === null || path === null) return failedStats(MISSING_ARGS);
    return statsOr(() => runSync(storeOf(ctx)!, ws, path, customKind({ assetType: optStr(type) || undefined, source: optStr(source) || undefined }), eventOpts(ctx)));
  },
  db_import_vuln: (ctx, w, json) => {
    const ws = argStr(w);
    const rec = jsonArg(json);
    if (ws === null || rec === undefined) return false;
    const kind: ImportKind<VulnInput> = {
      kind: 'vuln',
      map: (r, raw) => (isNucleiRecord(r) ? nucleiToVuln(r, raw) : vulnRecordToInput(r)),
      upsert: vulnUpsert,
    };
    return withStore(ctx, false, (s) => importOne(ctx, s, ws, kind, rec));
  },
  db_import_vuln_from_file: (ctx, w, file) => {
    const ws = argStr(w);
    const path = argStr(file);
    if (!storeOf(ctx) || ws === null || path === null) return failedStats(MISSING_ARGS);
    return statsOr(() => runSync(storeOf(ctx)!, ws, path, nucleiKind, eventOpts(ctx)));
  },
  db_select_assets: (ctx, w, format) => {
    const ws = argStr(w);
    return ws === null ? err('workspace is required') : withStore(ctx, DATABASE_UNAVAILABLE, (s) => selectAssets(s, { workspace: ws }, format));
  },
  db_select_assets_filtered: (ctx, w, status, type, format) => {
    const ws = argStr(w);
    if (ws === null) return err('workspace is required');
    const f = { workspace: ws, status_code: Number(status) > 0 ? Math.trunc(Number(status)) : undefined, asset_type: optStr(type) || undefined };
    return withStore(ctx, DATABASE_UNAVAILABLE, (s) => selectAssets(s, f, format));
  },
  db_select_vulnerabilities: (ctx, w, format) => {
    const ws = argStr(w);
    return ws === null ? err('workspace is required') : withStore(ctx, DATABASE_UNAVAILABLE, (s) => selectVulns(s, { workspace: ws }, format));
  },
  db_select_vulnerabilities_filtered: (ctx, w, severity, asset, format) => {
    const ws = argStr(w);
    if (ws === null) return err('workspace is required');
    const sev = optStr(severity).split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
    const f = { workspace: ws, severity: sev.length ? sev : undefined, asset_value: optStr(asset) || undefined };
    return withStore(ctx, DATABASE_UNAVAILABLE, (s) => selectVulns(s, f, format));
  },
  db_select: (ctx, sql, format) => {
    const r = select(ctx, sql);
    return typeof r === 'string' ? r : formatRows(r.rows, rowFormat(format), r.columns);
  },
  db_select_to_file: (ctx, sql, dest) => {
    const path = argStr(dest);
    const r = select(ctx, sql);
    return path !== null && typeof r !== 'string' && writeText(path, markdownTable(r.rows, r.columns));
  },
  db_select_to_jsonl: (ctx, sql, fields, dest) => {
    const path = argStr(dest);
    const r = select(ctx, sql);
    if (path === null || typeof r === 'string') return false;
    const wanted = optStr(fields).split(',').map((f) => f.trim()).filter(Boolean);
    const rows = wanted.length ? r.rows.map((row) => Object.fromEntries(wanted.map((f) => [f, row[f] ?? null]))) : r.rows;
    return writeText(path, jsonlText(rows));
  },
  db_asset_diff: (ctx, w) => {
    const ws = argStr(w) ?? ctx.workspace ?? null;
    return ws === null ? err('workspace is required') : withStore(ctx, DATABASE_UNAVAILABLE, (s) => diffLines('asset', s, ws));
  },
  db_vuln_diff: (ctx, w) => {
    const ws = argStr(w) ?? ctx.workspace ?? null;
    return ws === null ? err('workspace is required') : withStore(ctx, DATABASE_UNAVAILABLE, (s) => diffLines('vuln', s, ws));
  },
  db_asset_diff_to_file: (ctx, w, dest) => {
    const ws = argStr(w);
    const path = argStr(dest);
    return ws !== null && path !== null && withStore(ctx, false, (s) => writeText(path, diffLines('asset', s, ws)));
  },
  db_vuln_diff_to_file: (ctx, w, dest) => {
    const ws = argStr(w);
    const path = argStr(dest);
    return ws !== null && path !== null && withStore(ctx, false, (s) => writeText(path, diffLines('vuln', s, ws)));
  },
  register_artifact: (ctx, p, t) => {
    const path = argStr(p);
    const type = optStr(t) || 'text';
    const facts = path === null ? undefined : fileFacts(path);
    if (path === null || !facts || !ARTIFACT_TYPES.includes(type) || ctx.dbRunId === undefined) return false;
    return withStore(ctx, false, (s) => {
      const run = s.runs.get(ctx.dbRunId!);
      if (!run) return false;
      s.artifacts.upsert({
        id: `artifact-${unixNanos()}`, run_id: run.id, workspace: ctx.workspace || run.workspace, name: basename(path), artifact_path: path,
        artifact_type: type, content_type: contentTypeOf(path, type), size_bytes: facts.size, line_count: facts.lines, optional: false, description: '',
      });
      return true;
    });
  },
  store_artifact: (ctx, p) => {
    const path = argStr(p);
    const facts = path === null ? undefined : fileFacts(path);
    if (path === null || !facts || !ctx.workspace || ctx.dbRunId === undefined) return false;
    return withStore(ctx, false, (s) => {
      if (!s.runs.get(ctx.dbRunId!)) return false;
      s.artifacts.upsert({
        run_id: ctx.dbRunId!, workspace: ctx.workspace!, name: basename(path), artifact_path: path, artifact_type: 'output',
        content_type: facts.dir ? 'folder' : contentTypeOf(path), size_bytes: facts.size, line_count: facts.lines, optional: false, description: '',
      });
      return true;
    });
  },
  runtime_export: (ctx) => withStore(ctx, false, (s) => runtimeExport(ctx, s)),
  db_insert_asset: (ctx, w, data) => databaseFunctions.db_import_asset!(ctx, w, data),
};

for (const c of [...FILE_COUNTERS, 'total_assets', 'total_vulns'] as const) databaseFunctions[`db_${c}`] = counterFn(c);
for (const c of ['vuln_critical', 'vuln_high', 'vuln_medium', 'vuln_low'] as const) databaseFunctions[`db_${c}`] = counterFn(c);
for (const c of ['total_subdomains', 'total_urls', 'total_assets', 'total_vulns', 'vuln_critical', 'vuln_high', 'vuln_medium', 'vuln_low'] as const) {
  databaseFunctions[`db_select_${c}`] = readCounterFn(c);
}

/** runtime_export(): the run's state (status running) as run-state.json at StateFile (else in Output). */
function runtimeExport(ctx: FnContext, store: Store): boolean {
  const run = (ctx.dbRunId !== undefined ? store.runs.get(ctx.dbRunId) : undefined) ?? (ctx.runUuid ? store.runs.getByUuid(ctx.runUuid) : undefined);
  const file = ctx.stateFile || (ctx.output ? join(ctx.output, 'run-state.json') : '');
  if (!run || !file) return false;
  const ws = store.workspaces.get(run.workspace);
  const state = {
    run: {
      run_uuid: run.run_uuid, workflow_name: run.workflow_name, workflow_kind: run.workflow_kind, target: run.target, params: run.params,
      status: 'running', workspace: run.workspace, started_at: run.started_at, completed_at: run.completed_at, total_steps: run.total_steps,
      completed_steps: run.completed_steps, hooks_enabled: run.hooks_enabled, run_mode: run.run_mode, run_priority: run.priority,
    },
    workspace: {
      name: run.workspace, local_path: ctx.output || ws?.local_path || '', total_assets: ws?.total_assets ?? 0, total_subdomains: ws?.total_subdomains ?? 0,
      total_urls: ws?.total_urls ?? 0, total_vulns: ws?.total_vulns ?? 0, vuln_critical: ws?.vuln_critical ?? 0, vuln_high: ws?.vuln_high ?? 0,
      vuln_medium: ws?.vuln_medium ?? 0, vuln_low: ws?.vuln_low ?? 0, vuln_potential: 0, risk_score: ws?.risk_score ?? 0, last_run: ws?.last_run ?? run.started_at,
      run_workflow: run.workflow_name,
    },
    artifacts: store.artifacts.listByRun(run.id).map((a) => a.artifact_path),
    updated_at: new Date().toISOString(),
  };
  atomicWriteFile(file, `${JSON.stringify(state, null, 2)}\n`);
  return true;
}
