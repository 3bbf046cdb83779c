import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { optionsOf } from '../context.js';
import { errors } from '../../errors.js';
import { loadSettings } from '../../settings/index.js';
import { openStore } from '../../store/index.js';
import { runReadOnlyQuery } from '../../store/readonly-query.js';
import { indexWorkflows } from '../../workflow/indexer.js';
import { renderTable, colorEnabled } from '../output.js';

function settingsOf(command: Command) {
  const o = optionsOf<{ force?: boolean; cleanWs?: boolean; table?: string; limit: string; where?: string; columns?: string; search?: string }>(command);
  if (o.disableDb) throw errors.validation('osm db maintains the real database: drop --disable-db');
  return { o, loaded: loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder }) };
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `osm db migrate`. */
export async function dbMigrate(command: Command): Promise<void> {
  const { o, loaded } = settingsOf(command);
  const store = openStore(loaded.paths.db);
  try {
    const v = (store.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
    if (o.json) process.stdout.write(`${JSON.stringify({ database: loaded.paths.db, schema_version: v })}\n`);
    else process.stdout.write(`✔ Database ${loaded.paths.db} is at schema version ${v}\n`);
  } finally {
    store.close();
  }
}

/** `osm db clean --force [--clean-ws]`. */
export async function dbClean(command: Command): Promise<void> {
  const { o, loaded } = settingsOf(command);
  if (!o.force) throw errors.validation('this deletes every run, asset and finding: use --force to confirm');
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${loaded.paths.db}${suffix}`, { force: true });
  openStore(loaded.paths.db).close();
  let ws = '';
  if (o.cleanWs && existsSync(loaded.paths.workspaces)) {
    const entries = readdirSync(loaded.paths.workspaces);
    for (const e of entries) rmSync(join(loaded.paths.workspaces, e), { recursive: true, force: true });
    ws = `; ${entries.length} workspace folder(s) removed from ${loaded.paths.workspaces}`;
  }
  process.stdout.write(`✔ Database ${loaded.paths.db} recreated with fresh schema${ws}\n`);
}

/** `osm db list [-t table]`: tables and counts, or rows (read-only connection). */
export async function dbList(command: Command): Promise<void> {
  const { o, loaded } = settingsOf(command);
  const store = openStore(loaded.paths.db);
  try {
    const tables = (store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    if (!o.table) {
      const rows = tables.map((t) => [t, (store.db.prepare(`SELECT COUNT(*) AS n FROM "${t}"`).get() as { n: number }).n]);
      if (o.json) process.stdout.write(`${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
      else process.stdout.write(`${await renderTable(['Table', 'Rows'], rows, { color: colorEnabled(o.disableColor) })}\n`);
      return;
    }
    if (!tables.includes(o.table)) throw errors.validation(`unknown table ${JSON.stringify(o.table)}; tables: ${tables.join(', ')}`);
    const limit = Number(o.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw errors.validation(`--limit must be 1-10000, got ${JSON.stringify(o.limit)}`);
    const info = store.db.prepare(`PRAGMA table_info("${o.table}")`).all() as { name: string; type: string }[];
    const cols = o.columns ? o.columns.split(',').map((c) => c.trim()).filter(Boolean) : info.map((c) => c.name);
    for (const c of cols) if (!IDENT.test(c) || !info.some((i) => i.name === c)) throw errors.validation(`unknown column ${JSON.stringify(c)} of ${o.table}`);
    const conds: string[] = [];
    if (o.where) conds.push(`(${o.where})`);
    if (o.search) {
      const text = info.filter((c) => /char|text|clob/i.test(c.type) || c.type === '').map((c) => `"${c.name}" LIKE '%' || ${sqlString(o.search!)} || '%'`);
      if (text.length) conds.push(`(${text.join(' OR ')})`);
    }
    const sql = `SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM "${o.table}"${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''} ORDER BY rowid DESC LIMIT ${limit}`;
    let res;
    try {
      res = runReadOnlyQuery(store, sql, limit);
    } catch (err) {
      throw errors.validation(`query failed: ${(err as Error).message}`);
    }
    if (o.json) {
      process.stdout.write(`${JSON.stringify(res.rows, null, 2)}\n`);
      return;
    }
    const cell = (v: unknown) => {
      const t = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      return t.length > 80 ? `${t.slice(0, 77)}...` : t;
    };
    process.stdout.write(`${await renderTable(res.columns, res.rows.map((r) => res.columns.map((c) => cell((r as Record<string, unknown>)[c]))), { color: colorEnabled(o.disableColor) })}\n`);
    process.stdout.write(`◆ ${res.rows.length} row(s) of ${o.table}\n`);
  } finally {
    store.close();
  }
}

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** `osm db index workflow [--force]`. */
export async function dbIndex(command: Command, what: string): Promise<void> {
  if (what !== 'workflow' && what !== 'workflows') throw errors.validation(`nothing to index called ${JSON.stringify(what)} (use: osm db index workflow)`);
  const { o, loaded } = settingsOf(command);
  const store = openStore(loaded.paths.db);
  try {
    const r = indexWorkflows(store, loaded.paths.workflows, { force: Boolean(o.force) });
    if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    else process.stdout.write(`✔ Indexed ${loaded.paths.workflows}: ${r.added} added, ${r.updated} updated, ${r.removed} removed, ${r.unchanged} unchanged${r.errors.length ? `, ${r.errors.length} errors` : ''}\n`);
  } finally {
    store.close();
  }
}
