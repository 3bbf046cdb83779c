/**
 * The `db_import_<tool>` functions: a tool's output file into a workspace through the importer
 * table (src/ingest/tools.ts) — the same code as `osm import`. Like the other database functions
 * they answer the reference's stats object (`new, updated, unchanged, errors, total`, plus
 * `read`, `skipped` and the first `error_lines`) and carry an `error` field instead of throwing
 * when the import cannot run (no database, missing file), and log that error so it is visible.
 *
 * `db_import_vigolium` is not offered: vigolium's record format is not published, and importing a
 * guess would store wrong data silently (a call fails as an unknown function).
 */
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, optStr } from './helpers.js';
import { messageOf } from '../../errors.js';
import { importScopeOf } from './scope-import.js';
import type { Store } from '../../store/index.js';
import { importToolFileSync, toolImporter, toolNames, type ToolImportStats } from '../../ingest/index.js';

function storeOf(ctx: FnContext): Store | undefined {
  const s = ctx.store as Store | undefined;
  return s && typeof s === 'object' && 'assets' in s && 'workspaces' in s ? s : undefined;
}

function failed(ctx: FnContext, name: string, message: string): Record<string, unknown> {
  (ctx.log ?? ((l: string) => process.stdout.write(`${l}\n`)))(`[WARN] ${name}: ${message}`);
  return { new: 0, updated: 0, unchanged: 0, errors: 0, skipped: 0, total: 0, read: 0, error_lines: [], error: message };
}

function compact(s: ToolImportStats): Record<string, unknown> {
  return { tool: s.tool, new: s.new, updated: s.updated, unchanged: s.unchanged, errors: s.errors, skipped: s.skipped, total: s.total, read: s.read, out_of_scope: s.out_of_scope, error_lines: s.error_lines.slice(0, 20) };
}

/** Runs one importer; `source`/`baseUrl` as the tool allows. */
function run(ctx: FnContext, fn: string, tool: string, w: unknown, file: unknown, extra: { source?: string; baseUrl?: string } = {}): Record<string, unknown> {
  const importer = toolImporter(tool);
  if (!importer) return failed(ctx, fn, `unknown tool '${tool}': supported tools are ${toolNames().join(', ')}`);
  const store = storeOf(ctx);
  const ws = argStr(w);
  const path = argStr(file);
  if (!store || ws === null || path === null) return failed(ctx, fn, 'workspace, file_path and a database are required');
  try {
    return compact(importToolFileSync(store, ws, importer, path, { ...extra, runUuid: ctx.runUuid, workflowName: ctx.workflowName, scope: importScopeOf(ctx, `import:${importer.name}`) }));
  } catch (e) {
    return failed(ctx, fn, messageOf(e));
  }
}

/** `db_import_<tool>(workspace, file_path, source?)`. */
function toolFn(tool: string): FnImpl {
  return (ctx, w, file, source) => run(ctx, `db_import_${tool}`, tool, w, file, { source: optStr(source) || undefined });
}

export const toolImportFunctions: Record<string, FnImpl> = {
  db_import_tool: (ctx, tool, w, file, source) => run(ctx, 'db_import_tool', optStr(tool), w, file, { source: optStr(source) || undefined }),
  db_import_nmap: toolFn('nmap'),
  db_import_masscan: toolFn('masscan'),
  db_import_naabu: toolFn('naabu'),
  db_import_subfinder: toolFn('subfinder'),
  db_import_dnsx: toolFn('dnsx'),
  db_import_whatweb: toolFn('whatweb'),
  db_import_ffuf: toolFn('ffuf'),
  db_import_gobuster: (ctx, w, file, baseUrl, source) =>
    run(ctx, 'db_import_gobuster', 'gobuster', w, file, { baseUrl: optStr(baseUrl) || undefined, source: optStr(source) || undefined }),
  db_import_katana: toolFn('katana'),
  db_import_testssl: toolFn('testssl'),
  db_import_sslscan: toolFn('sslscan'),
  db_import_sarif: toolFn('sarif'),
  // The reference's port importer reads nmap_to_jsonl output; its default source is `portscan`.
  db_import_port_assets: (ctx, w, file, source) => run(ctx, 'db_import_port_assets', 'ports', w, file, { source: optStr(source) || 'portscan' }),
  // The reference answers the number of assets stored.
  db_import_dns_asset: (ctx, w, file) => {
    const s = run(ctx, 'db_import_dns_asset', 'dns', w, file, { source: 'dns' });
    return s.error ? 0 : Number(s.new) + Number(s.updated) + Number(s.unchanged);
  },
};
