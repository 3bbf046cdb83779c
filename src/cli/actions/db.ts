import { withApp } from '../app.js';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { optionsOf } from '../context.js';
import { errors } from '../../errors.js';
import { loadSettings } from '../../settings/index.js';
import { openStore } from '../../store/index.js';
import { latestVersion, migrations } from '../../store/index.js';
import { inspectSqliteFile, listTableRows } from '../../store/maintenance.js';
import { copyPgToSqlite, copySqliteToPg, type CopyProgress, type CopyResult } from '../../store/copy.js';
import { dbEngineOf, pgTarget, pgTargetFromSettings } from '../../store/pg/config.js';
import { openPgPool, probePg, requireReachable } from '../../store/pg/pool.js';
import { applyPgMigrations, pgLatestVersion, pgPendingMigrations, pgSchemaVersion } from '../../store/pg/migrate.js';
import { indexWorkflows } from '../../workflow/indexer.js';
import { renderTable, colorEnabled } from '../output.js';

function settingsOf(command: Command) {
  const o = optionsOf<{ force?: boolean; cleanWs?: boolean; to?: string; from?: string; table?: string; limit: string; where?: string; columns?: string; search?: string }>(command);
  if (o.disableDb) throw errors.validation('osm db maintains the real database: drop --disable-db');
  return { o, loaded: loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder }) };
}

/** `osm db migrate`: applies pending migrations to the configured engine. */
export async function dbMigrate(command: Command): Promise<void> {
  const { o, loaded } = settingsOf(command);
  const db = loaded.settings.database;
  if (dbEngineOf(db) === 'postgresql') {
    const target = pgTargetFromSettings(db);
    await requireReachable(target);
    const pool = openPgPool(target, { max: 1 });
    try {
      const applied = await applyPgMigrations(pool);
      const v = await pgSchemaVersion(pool);
      if (o.json) process.stdout.write(`${JSON.stringify({ engine: 'postgresql', database: target.display, schema_version: v, applied })}\n`);
      else process.stdout.write(`✔ PostgreSQL ${target.display} is at schema version ${v}${applied.length ? ` (applied ${applied.join(', ')})` : ' (nothing to apply)'}\n`);
    } finally {
      await pool.end();
    }
    return;
  }
  const before = inspectSqliteFile(loaded.paths.db).version;
  const store = openStore(loaded.paths.db);
  try {
    const v = store.maintenance.schemaVersion();
    const applied = store.maintenance.latestVersion() > before ? migrations.filter((m) => m.version > before).map((m) => m.version) : [];
    if (o.json) process.stdout.write(`${JSON.stringify({ engine: 'sqlite', database: loaded.paths.db, schema_version: v, applied })}\n`);
    else process.stdout.write(`✔ Database ${loaded.paths.db} is at schema version ${v}${applied.length ? ` (applied ${applied.join(', ')})` : ''}\n`);
  } finally {
    store.close();
  }
}

/**
 * `osm db status [--json]`: the configured engine, where the database is (URL with the password
 * masked), whether it answers, and the schema version and pending migrations of each engine in use
 * (the SQLite base always; PostgreSQL when it is configured). Exit 1 when PostgreSQL is configured
 * and unreachable.
 */
export async function dbStatus(command: Command): Promise<void> {
  const { o, loaded } = settingsOf(command);
  const db = loaded.settings.database;
  const engine = dbEngineOf(db);
  const file = inspectSqliteFile(loaded.paths.db);
  const sqlite = { path: loaded.paths.db, exists: file.exists, schema_version: file.version, latest_version: latestVersion(), pending: file.pending };
  let postgresql: Record<string, unknown> | undefined;
  let failure: string | undefined;
  if (engine === 'postgresql') {
    const target = pgTargetFromSettings(db);
    const probe = await probePg(target);
    postgresql = { url: target.display, address: probe.address, reachable: probe.reachable, ...(probe.version ? { server_version: probe.version } : {}), ...(probe.cause ? { error: probe.cause } : {}) };
    if (probe.reachable) {
      const pool = openPgPool(target, { max: 1 });
      try {
        const v = await pgSchemaVersion(pool);
        Object.assign(postgresql, { schema_version: v, latest_version: pgLatestVersion(), pending: (await pgPendingMigrations(pool)).map((m) => ({ version: m.version, name: m.name })) });
      } finally {
        await pool.end();
      }
    } else {
      failure = `PostgreSQL at ${probe.address} (${target.display}) is not reachable: ${probe.cause}`;
    }
  }
  const reachable = engine === 'sqlite' ? true : Boolean(postgresql?.reachable);
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ engine, reachable, url: engine === 'postgresql' ? postgresql!.url : loaded.paths.db, sqlite, ...(postgresql ? { postgresql } : {}) }, null, 2)}\n`);
  } else {
    const pending = (list: { version: number; name: string }[]) => (list.length ? `${list.length} pending (${list.map((m) => `${m.version}-${m.name}`).join(', ')})` : 'none pending');
    const lines = [`▶ Engine: ${engine}`];
    lines.push(`  SQLite base: ${sqlite.path}${file.exists ? `, schema version ${file.version} of ${sqlite.latest_version}, ${pending(file.pending)}` : ' (not created yet)'}`);
    if (postgresql) {
      lines.push(`  PostgreSQL: ${postgresql.url} (${postgresql.address}) ${postgresql.reachable ? `reachable, server ${postgresql.server_version}` : `UNREACHABLE: ${postgresql.error}`}`);
      if (postgresql.reachable) lines.push(`  PostgreSQL schema version ${postgresql.schema_version} of ${postgresql.latest_version}, ${pending(postgresql.pending as { version: number; name: string }[])}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (failure) throw errors.unavailable(failure);
}

/**
 * `osm db copy --to <postgres url>` / `--from <postgres url>`: the whole base between the SQLite
 * store and PostgreSQL (src/store/copy.ts: truncate-and-reload per table, checksums verified).
 */
export async function dbCopy(command: Command): Promise<void> {
  const { o, loaded } = settingsOf(command);
  const c = o as unknown as { to?: string; from?: string };
  if (Boolean(c.to) === Boolean(c.from)) throw errors.validation('give exactly one of --to <postgres url> (copy the SQLite base to PostgreSQL) or --from <postgres url> (copy PostgreSQL into the SQLite base)');
  const target = pgTarget((c.to ?? c.from)!, c.to ? '--to' : '--from');
  await requireReachable(target);
  const progress = copyProgress(Boolean(o.json));
  const pool = openPgPool(target, { max: 2 });
  const store = openStore(loaded.paths.db);
  let result: CopyResult;
  try {
    result = c.to ? await copySqliteToPg(store, pool, { onProgress: progress.update }) : await copyPgToSqlite(pool, store, { onProgress: progress.update });
  } finally {
    progress.end();
    store.close();
    await pool.end();
  }
  const from = c.to ? loaded.paths.db : target.display;
  const to = c.to ? target.display : loaded.paths.db;
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ from, to, ...result }, null, 2)}\n`);
  } else {
    const rows = result.tables.map((t) => [t.table, t.source_rows, t.target_rows, t.source_checksum.slice(0, 12), t.target_checksum.slice(0, 12), t.ok ? '✔' : '✘ MISMATCH', `${t.ms} ms`]);
    process.stdout.write(`${await renderTable(['Table', 'Source rows', 'Target rows', 'Source sum', 'Target sum', 'Verified', 'Time'], rows, { color: colorEnabled(o.disableColor) })}\n`);
    const total = result.tables.reduce((n, t) => n + t.target_rows, 0);
    process.stdout.write(result.ok ? `✔ Copied ${total} rows in ${result.tables.length} tables from ${from} to ${to}; counts and checksums match\n` : `⏹ Copy from ${from} to ${to} finished but ${result.tables.filter((t) => !t.ok).map((t) => t.table).join(', ')} did not verify\n`);
  }
  if (!result.ok) process.exitCode = 1;
}

/** Progress of a copy on stderr: one rewritten line on a terminal, a plain line per table otherwise (none with --json). */
function copyProgress(json: boolean): { update: (p: CopyProgress) => void; end: () => void } {
  const tty = Boolean(process.stderr.isTTY) && process.env.TERM !== 'dumb';
  let last = 0;
  let drawn = false;
  return {
    update: (p) => {
      if (tty) {
        const now = Date.now();
        if (!p.done && now - last < 100) return;
        last = now;
        const width = 24;
        const frac = p.total > 0 ? Math.min(1, p.rows / p.total) : 1;
        const bar = `${'█'.repeat(Math.round(frac * width))}${'░'.repeat(width - Math.round(frac * width))}`;
        process.stderr.write(`\r\x1b[2K[${p.index}/${p.tables}] ${p.table} ${bar} ${p.rows}/${p.total}`);
        drawn = true;
      } else if (p.done && !json) {
        process.stderr.write(`[${p.index}/${p.tables}] ${p.table}: ${p.rows} rows\n`);
      }
    },
    end: () => {
      if (drawn) process.stderr.write('\r\x1b[2K');
    },
  };
}

/** `osm db clean --force [--clean-ws]`. */
export async function dbClean(command: Command): Promise<void> {
  const { o, loaded } = settingsOf(command);
  if (!o.force) throw errors.validation('this deletes every run, asset and finding: use --force to confirm');
  if (dbEngineOf(loaded.settings.database) === 'postgresql') {
    throw errors.validation(
      `osm db clean recreates the SQLite file; the configured store is PostgreSQL (${pgTargetFromSettings(loaded.settings.database).display}): ` +
        'drop and create that database, then run osm db migrate (or clear single tables with POST /osm/api/database/tables/{table}/clear)',
    );
  }
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

/** `osm db list [-t table]`: tables and counts, or rows (read-only), on the configured engine. */
export async function dbList(command: Command): Promise<void> {
  const { o } = settingsOf(command);
  await withApp(o, async (app) => {
    const repos = app.repos;
    const tables = await repos.maintenance.tables();
    if (!o.table) {
      const rows: [string, number][] = [];
      for (const t of tables) rows.push([t, await repos.maintenance.count(t)]);
      if (o.json) process.stdout.write(`${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`);
      else process.stdout.write(`${await renderTable(['Table', 'Rows'], rows, { color: colorEnabled(o.disableColor) })}\n`);
      return;
    }
    if (!tables.includes(o.table)) throw errors.validation(`unknown table ${JSON.stringify(o.table)}; tables: ${tables.join(', ')}`);
    const limit = Number(o.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw errors.validation(`--limit must be 1-10000, got ${JSON.stringify(o.limit)}`);
    const res = await listTableRows(repos, { table: o.table, columns: o.columns?.split(',').map((c) => c.trim()).filter(Boolean), where: o.where, search: o.search, limit });
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
  });
}

/** `osm db index workflow [--force]`, on the configured engine. */
export async function dbIndex(command: Command, what: string): Promise<void> {
  if (what !== 'workflow' && what !== 'workflows') throw errors.validation(`nothing to index called ${JSON.stringify(what)} (use: osm db index workflow)`);
  const { o, loaded } = settingsOf(command);
  await withApp(o, async (app) => {
    const r = await indexWorkflows(app.repos, loaded.paths.workflows, { force: Boolean(o.force) });
    if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    else process.stdout.write(`✔ Indexed ${loaded.paths.workflows}: ${r.added} added, ${r.updated} updated, ${r.removed} removed, ${r.unchanged} unchanged${r.errors.length ? `, ${r.errors.length} errors` : ''}\n`);
  });
}
