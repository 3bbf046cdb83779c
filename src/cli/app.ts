/** The application context of one CLI command, built from the global flags. */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openAppContext, type AppContext } from '../services/context.js';
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

/**
 * Opens settings, database and workflow loader for the folders the global flags name, on the
 * engine the settings select (SQLite, or PostgreSQL with `database.db_engine: postgresql`).
 */
export function openApp(o: GlobalOptions): Promise<AppContext> {
  return openAppContext({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
}

/** Runs `fn` with an application context and closes it afterwards (once `fn`'s promise settled). */
export async function withApp<T>(o: GlobalOptions, fn: (app: AppContext) => T | Promise<T>): Promise<T> {
  const app = await openApp(o);
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}
