import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings, type LoadedSettings, type LoadOptions, SettingsManager } from '../settings/index.js';
import { asyncSqlite, openStore, type Store } from '../store/index.js';
import { WorkflowLoader } from '../workflow/loader.js';
import { ProcessRegistry } from '../engine/process-registry.js';
import type { EngineDeps } from '../engine/types.js';

/**
 * Everything a use case needs: live settings, the store, the workflow loader and the process
 * registry. The CLI builds one per command; the daemon builds one for its lifetime.
 */
export interface AppContext extends EngineDeps {
  manager: SettingsManager;
  close(): void;
}

/** Opens settings (creating the base folder on first use), the database and the loader. */
export function createAppContext(opts: LoadOptions & { disableDb?: boolean } = {}): AppContext {
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
  let loader = new WorkflowLoader(loaded.paths.workflows);
  let loaderDir = loaded.paths.workflows;
  const ctx: AppContext = {
    manager,
    settings: () => manager.current,
    store,
    repos: asyncSqlite(store),
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
    close() {
      manager.close();
      store.close();
      dropTemp();
    },
  };
  return ctx;
}
