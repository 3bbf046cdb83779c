import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings, type LoadedSettings, type LoadOptions, SettingsManager } from '../settings/index.js';
import { asyncSqlite, openStore, type Store } from '../store/index.js';
import { sqliteLocator } from '../store/locator.js';
import { dbEngineOf, pgTarget, pgTargetFromSettings } from '../store/pg/config.js';
import { openPgStore } from '../store/pg/store.js';
import { WorkflowLoader } from '../workflow/loader.js';
import { ProcessRegistry } from '../engine/process-registry.js';
import type { EngineDeps } from '../engine/types.js';

/**
 * Everything a use case needs: live settings, the store, the workflow loader and the process
 * registry. The CLI builds one per command; the daemon builds one for its lifetime.
 */
export interface AppContext extends EngineDeps {
  manager: SettingsManager;
  close(): void | Promise<void>;
}

/** A context on the SQLite engine: the synchronous store is there too. */
export interface SqliteAppContext extends AppContext {
  store: Store;
  close(): void;
}

/**
 * Opens settings (creating the base folder on first use), the SQLite database and the loader.
 * Commands that may run on PostgreSQL use openAppContext.
 */
export function createAppContext(opts: LoadOptions & { disableDb?: boolean } = {}): SqliteAppContext {
  const loaded: LoadedSettings = loadSettings(opts);
  const manager = new SettingsManager(loaded, opts);
  const throwaway = opts.disableDb ?? process.env.OSM_DISABLE_DB === '1';
  // --disable-db: a database in a private temp folder (script worker threads open it by path too).
  const tempDir = throwaway ? mkdtempSync(join(tmpdir(), 'osm-nodb-')) : undefined;
  const dropTemp = () => {
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  };
  if (tempDir) process.once('exit', dropTemp);
  const store: Store = openStore(tempDir ? join(tempDir, 'database-osm.sqlite') : loaded.paths.db);
  const base = baseContext(manager);
  const ctx: SqliteAppContext = {
    ...base,
    store,
    repos: asyncSqlite(store),
    db: sqliteLocator(store.path),
    close() {
      manager.close();
      store.close();
      dropTemp();
    },
  };
  return ctx;
}

/**
 * Opens the context on the engine the settings select: SQLite (createAppContext), or PostgreSQL
 * (`database.db_engine: postgresql` or OSM_DATABASE_URL): a pool, migrations applied, and an
 * error naming host:port and the cause when the server cannot be reached.
 */
export async function openAppContext(opts: LoadOptions & { disableDb?: boolean; databaseUrl?: string } = {}): Promise<AppContext> {
  const loaded: LoadedSettings = loadSettings(opts);
  const dbSettings = loaded.settings.database;
  if (!opts.databaseUrl && ((opts.disableDb ?? process.env.OSM_DISABLE_DB === '1') || dbEngineOf(dbSettings) !== 'postgresql')) return createAppContext(opts);
  const target = opts.databaseUrl ? pgTarget(opts.databaseUrl, 'databaseUrl') : pgTargetFromSettings(dbSettings);
  const repos = await openPgStore(target);
  const manager = new SettingsManager(loaded, opts);
  return {
    ...baseContext(manager),
    repos,
    db: { engine: 'postgresql', url: target.url },
    async close() {
      manager.close();
      await repos.close();
    },
  };
}

/** What every context has besides its store: settings, the loader (following the folder), the process registry. */
function baseContext(manager: SettingsManager): Pick<AppContext, 'manager' | 'settings' | 'loader' | 'registry'> {
  let loader = new WorkflowLoader(manager.current.paths.workflows);
  let loaderDir = manager.current.paths.workflows;
  return {
    manager,
    settings: () => manager.current,
    get loader() {
      // A settings reload may move the workflows folder.
      const dir = manager.current.paths.workflows;
      if (dir !== loaderDir) {
        loader = new WorkflowLoader(dir);
        loaderDir = dir;
      }
      return loader;
    },
    registry: new ProcessRegistry(),
  };
}
