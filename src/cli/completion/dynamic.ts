/**
 * `osm __complete <source>`: the values a completion script asks for while the user types —
 * workflow names, run ids, workspaces — one per line as `value<TAB>description`. It reads the
 * base folder as it is and never creates one: no settings file means defaults, no database means
 * no runs, and any failure means no candidates (a completion must never print an error).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { loadSettings } from '../../settings/load.js';
import { listWorkflowFiles } from '../../workflow/lookup.js';
import type { GlobalOptions } from '../context.js';
import { DYNAMIC_SOURCES, type DynamicSource } from './value-hints.js';

/** At most this many runs are offered (newest first): a completion list is read by a person. */
const RUN_LIMIT = 200;

/** True when `s` names a dynamic source. */
export function isDynamicSource(s: string): s is DynamicSource {
  return (DYNAMIC_SOURCES as readonly string[]).includes(s);
}

/** The candidate lines of `source`; [] when the base folder or database is missing or unreadable. */
export async function completionValues(source: DynamicSource, o: GlobalOptions): Promise<string[]> {
  try {
    const loaded = loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder, create: false });
    switch (source) {
      case 'workflows':
      case 'flows':
      case 'modules':
        return workflowNames(loaded.paths.workflows, source);
      case 'workspaces':
        return workspaceNames(loaded.paths.workspaces);
      case 'runs':
        return await runIds(loaded.paths.db);
    }
  } catch {
    return [];
  }
}

/** `kind:` of a workflow file without parsing it (a completion must stay fast). */
function kindOf(file: string): string | undefined {
  try {
    return /^kind:\s*["']?(flow|module)\b/m.exec(readFileSync(file, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

function workflowNames(dir: string, source: 'workflows' | 'flows' | 'modules'): string[] {
  if (!existsSync(dir)) return [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const file of listWorkflowFiles(dir)) {
    const kind = kindOf(file);
    if (source === 'flows' && kind !== 'flow') continue;
    if (source === 'modules' && kind !== 'module') continue;
    const name = basename(file, extname(file));
    if (seen.has(name)) continue;
    seen.add(name);
    out.push(`${name}\t${kind ?? 'workflow'}`);
  }
  return out.sort();
}

function workspaceNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => !n.startsWith('.') && statSync(`${dir}/${n}`, { throwIfNoEntry: false })?.isDirectory())
    .sort();
}

async function runIds(dbPath: string): Promise<string[]> {
  if (!existsSync(dbPath)) return [];
  const { openStore } = await import('../../store/db.js');
  const store = openStore(dbPath, { readonly: true });
  try {
    const { data } = store.runs.list({}, { offset: 0, limit: RUN_LIMIT });
    return data.map((r) => `${r.run_uuid}\t${r.status} ${r.workflow_name} ${r.target}`.replace(/[\r\n]+/g, ' '));
  } finally {
    store.close();
  }
}
