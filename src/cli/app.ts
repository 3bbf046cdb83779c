/** The application context of one CLI command, built from the global flags. */
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
export function commandOrg(app: AppContext, o: GlobalOptions): string | undefined {
  if (o.org !== undefined && o.org.trim() !== '') return orgFilter(app, o.org);
  const file = activeOrgFile(app);
  if (!existsSync(file)) return undefined;
  const ref = readFileSync(file, 'utf8').trim();
  if (ref === '') return undefined;
  const org = findOrg(app, ref);
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
  return createAppContext({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
}

/** Runs `fn` with an application context and closes it afterwards. */
export function withApp<T>(o: GlobalOptions, fn: (app: AppContext) => T): T {
  const app = openApp(o);
  try {
    return fn(app);
  } finally {
    app.close();
  }
}
