/** The application context of one CLI command, built from the global flags. */
import { dbEngineOf } from '../store/pg/config.js';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAppContext, type AppContext } from '../services/context.js';
import { errors } from '../errors.js';
import { findOrg, orgFilter } from '../services/orgs.js';
import type { GlobalOptions } from './context.js';

/** The file `osm org use` writes (reference: `<base>/.active-org`). */
export function activeOrgFile(app: AppContext): string {
  return join(app.settings().paths.base, '.active-org');
}

/** The org a command works in: `--org`, else the one `osm org use` chose, else none (all orgs). */
export async function commandOrg(app: AppContext, o: GlobalOptions): Promise<string | undefined> {
  if (o.org !== undefined && o.org.trim() !== '') return orgFilter(app, o.org);
  const file = activeOrgFile(app);
  if (!existsSync(file)) return undefined;
  const ref = readFileSync(file, 'utf8').trim();
  if (ref === '') return undefined;
  const org = await findOrg(app, ref);
  if (!org) throw errors.validation(`the active org chosen with 'osm org use' no longer exists (${ref}): run 'osm org use --clear' or choose another`);
  return org.uuid;
}

/** Remembers `uuid` as the active org (undefined clears it). */
export function setActiveOrg(app: AppContext, uuid: string | undefined): void {
  const file = activeOrgFile(app);
  if (uuid === undefined) rmSync(file, { force: true });
  else writeFileSync(file, `${uuid}\n`, { mode: 0o600 });
}

/** Opens settings, database and workflow loader for the folders the global flags name. */
export function openApp(o: GlobalOptions): AppContext {
  const app = createAppContext({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  // The runtime store is SQLite-only for now: say so rather than read the SQLite base silently.
  if (dbEngineOf(app.settings().settings.database) === 'postgresql' && !o.json) {
    process.stderr.write(`⚠ database.db_engine is postgresql, but this command reads the SQLite base ${app.settings().paths.db}: the runtime store on PostgreSQL is not available yet (docs/database.md)\n`);
  }
  return app;
}

/** Runs `fn` with an application context and closes it afterwards (once `fn`'s promise settled). */
export async function withApp<T>(o: GlobalOptions, fn: (app: AppContext) => T | Promise<T>): Promise<T> {
  const app = openApp(o);
  try {
    return await fn(app);
  } finally {
    app.close();
  }
}
