/**
 * Workspace use cases: list (database rows, optionally merged with the folders of the workspaces
 * folder), get, delete (rows always; files only when asked, strictly inside the workspaces
 * folder, never through a symlink) and reading a run state file.
 *
 * Names come from URLs and are checked with `isSafeName` before any path is built; every path is
 * then resolved with its symlinks and must stay inside the workspaces folder.
 */
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readSync, realpathSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errors, messageOf } from '../errors.js';
import type { WorkspaceDeleteCounts, WorkspaceRecord } from '../store/index.js';
import { STATE_FILES } from '../engine/state-files.js';
import { isInside, isSafeName, safeJoin } from '../util/fs-safe.js';
import type { AppContext } from './context.js';
import { UNRESTRICTED, workspaceInScope, type Scope } from '../auth/scope.js';
import { DEFAULT_ORG_UUID, type OrgFilter } from '../store/org-constants.js';

export const STATE_FILE_KINDS = {
  execution_log: STATE_FILES.executionLog,
  console_log: STATE_FILES.consoleLog,
  completed_file: STATE_FILES.completed,
  state_file: STATE_FILES.state,
  workflow_file: STATE_FILES.workflow,
} as const;
export type StateFileKind = keyof typeof STATE_FILE_KINDS;

/** Largest state file content returned by the API. */
export const MAX_STATE_FILE_BYTES = 5 * 1024 * 1024;
/** Folder names considered when merging the workspaces folder into the listing. */
const MAX_FOLDER_ENTRIES = 10_000;

export interface FilesystemWorkspace {
  name: string;
  local_path?: string;
  data_source: 'filesystem';
  total_assets: number;
  total_vulns: number;
  last_run: string | null;
  in_database: boolean;
  tags: string[];
}

/** Throws `invalidWorkspaceName` unless `name` is one safe path component. */
export function checkWorkspaceName(name: string): string {
  if (!isSafeName(name)) throw errors.invalidWorkspaceName();
  return name;
}

function workspacesRoot(app: AppContext): string {
  return resolve(app.settings().paths.workspaces);
}

/**
 * The folder of a workspace, or undefined when there is none. Throws `pathTraversal` when the
 * folder (a symlink, say) resolves outside the workspaces folder.
 */
export function workspaceFolder(app: AppContext, name: string): string | undefined {
  const root = workspacesRoot(app);
  const dir = safeJoin(root, checkWorkspaceName(name));
  if (!existsSync(dir)) return undefined;
  let realRoot = root;
  try {
    realRoot = realpathSync(root);
  } catch {
    // root missing: dir cannot exist either
  }
  if (!isInside(realRoot, realpathSync(dir))) throw errors.pathTraversal('workspace path');
  return dir;
}

/** Folder names of the workspaces folder (directories or links to directories, safe names only). */
function folderNames(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names.slice(0, MAX_FOLDER_ENTRIES)) {
    if (!isSafeName(name) || name.startsWith('.')) continue;
    try {
      if (statSync(join(root, name)).isDirectory()) out.push(name);
    } catch {
      // dangling link
    }
  }
  return out;
}

export interface WorkspaceListQuery {
  search?: string;
  data_source?: string;
  filesystem?: boolean;
  /** Only workspaces of this org (uuid) or these orgs; with `filesystem`, a folder without a row belongs to the default org. */
  org_uuid?: OrgFilter;
  offset: number;
  limit: number;
}

/** GET /workspaces: database rows by name; with `filesystem` merged with the folders on disk. */
export async function listWorkspaces(app: AppContext, q: WorkspaceListQuery): Promise<{ data: (WorkspaceRecord | FilesystemWorkspace)[]; total: number; workspaces_dir?: string }> {
  const page = { offset: q.offset, limit: q.limit };
  if (!q.filesystem) {
    const res = await app.repos.workspaces.list({ search: q.search || undefined, data_source: q.data_source || undefined, org_uuid: q.org_uuid || undefined }, page);
    return { data: res.data, total: res.total };
  }
  const root = workspacesRoot(app);
  const folders = new Set(folderNames(root));
  const dbNames = await app.repos.workspaces.names();
  // Every row in one read, not one read per name.
  const rows = new Map((await app.repos.workspaces.list({}, { offset: 0, limit: Math.max(1, dbNames.length) })).data.map((r) => [r.name, r]));
  const names = new Set([...dbNames, ...folders]);
  const needle = (q.search ?? '').toLowerCase();
  const all = [...names]
    .filter((n) => !needle || n.toLowerCase().includes(needle))
    .filter((n) => q.org_uuid === undefined || orgMatches(q.org_uuid, rows.get(n)?.org_uuid))
    .sort()
    .map((name): FilesystemWorkspace => {
      const row = rows.get(name);
      const onDisk = folders.has(name);
      return {
        name,
        ...(onDisk ? { local_path: join(root, name) } : {}),
        data_source: 'filesystem',
        total_assets: row?.total_assets ?? 0,
        total_vulns: row?.total_vulns ?? 0,
        last_run: row?.last_run ?? null,
        in_database: Boolean(row),
        tags: ['filesystem', ...(onDisk && !row ? ['filesystem-only'] : [])],
      };
    });
  return { data: all.slice(page.offset, page.offset + page.limit), total: all.length, workspaces_dir: root };
}

async function countRuns(app: AppContext, name: string, status?: 'running' | 'queued' | 'pending'): Promise<number> {
  return (await app.repos.runs.list({ workspace: name, ...(status ? { status } : {}) }, { offset: 0, limit: 1 })).total;
}

/** GET /workspaces/{name}: the row with its run count (a folder without a row is shown as such). */
export async function getWorkspace(app: AppContext, name: string, scope: Scope = UNRESTRICTED): Promise<(WorkspaceRecord | Record<string, unknown>) & { runs_count: number }> {
  checkWorkspaceName(name);
  if (!(await workspaceInScope(app.repos, scope, name))) throw errors.workspaceNotFound(name);
  const row = await app.repos.workspaces.get(name);
  if (row) return { ...row, runs_count: await countRuns(app, name) };
  const dir = workspaceFolder(app, name);
  if (!dir) throw errors.workspaceNotFound(name);
  return { name, data_source: 'filesystem', local_path: dir, total_assets: 0, total_vulns: 0, last_run: null, run_workflow: '', runs_count: await countRuns(app, name) };
}

/** True when something (even a dangling link) exists at `path`. */
function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Removes a workspace folder without ever following a link out of the workspaces folder. */
function removeFolder(app: AppContext, name: string): boolean {
  const root = workspacesRoot(app);
  const dir = safeJoin(root, name);
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return false;
  }
  // A link is removed as a link: its target (possibly outside) is not touched.
  if (st.isSymbolicLink()) {
    unlinkSync(dir);
    return true;
  }
  if (!st.isDirectory()) return false;
  if (!isInside(realpathSync(root), realpathSync(dir))) throw errors.pathTraversal('workspace path');
  // rmSync does not follow links inside the tree; it unlinks them.
  rmSync(dir, { recursive: true, force: true });
  return true;
}

/** DELETE /workspaces/{name}: the row and its data; the folder only with `purgeFiles`. */
export async function deleteWorkspace(app: AppContext, name: string, opts: { purgeFiles?: boolean } = {}): Promise<{ message: string; name: string; deleted: WorkspaceDeleteCounts; files_removed: boolean }> {
  checkWorkspaceName(name);
  const row = await app.repos.workspaces.get(name);
  if (!row && !entryExists(safeJoin(workspacesRoot(app), name))) throw errors.workspaceNotFound(name);
  const active = (await countRuns(app, name, 'running')) + (await countRuns(app, name, 'queued')) + (await countRuns(app, name, 'pending'));
  if (active > 0) throw errors.workspaceBusy(name, active);
  const deleted = await app.repos.tx(async () => {
    const counts = await app.repos.workspaces.deleteData(name);
    await app.repos.workspaces.delete(name);
    return counts;
  });
  let filesRemoved = false;
  if (opts.purgeFiles) {
    try {
      filesRemoved = removeFolder(app, name);
    } catch (err) {
      if ((err as { status?: number }).status === 400) throw err;
      throw errors.internal(`Workspace rows deleted, but removing its folder failed: ${messageOf(err)}`);
    }
  }
  return { message: 'Workspace deleted', name, deleted, files_removed: filesRemoved };
}

/** GET /workspaces/{name}/state-file: one run state file of the workspace (capped at 5 MiB). */
export async function readStateFile(app: AppContext, name: string, kind: string | undefined, scope: Scope = UNRESTRICTED): Promise<{ workspace: string; state_file: StateFileKind; file_path: string; content: string; size: number; truncated: boolean }> {
  checkWorkspaceName(name);
  if (!(await workspaceInScope(app.repos, scope, name))) throw errors.workspaceNotFound(name);
  const allowed = Object.keys(STATE_FILE_KINDS);
  if (!kind || !allowed.includes(kind)) throw errors.invalidStateFile(allowed.join(', '));
  const dir = workspaceFolder(app, name);
  if (!dir) {
    if (await app.repos.workspaces.get(name)) throw errors.stateFileNotFound(STATE_FILE_KINDS[kind as StateFileKind]);
    throw errors.workspaceNotFound(name);
  }
  const fileName = STATE_FILE_KINDS[kind as StateFileKind];
  const file = join(dir, fileName);
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    throw errors.stateFileNotFound(fileName);
  }
  if (!isInside(realpathSync(dir), real)) throw errors.pathTraversal('state_file path');
  const st = statSync(real);
  if (!st.isFile()) throw errors.stateFileNotFound(fileName);
  const size = Math.min(st.size, MAX_STATE_FILE_BYTES);
  const buf = Buffer.alloc(size);
  const fd = openSync(real, 'r');
  let read = 0;
  try {
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
  } finally {
    closeSync(fd);
  }
  return { workspace: name, state_file: kind as StateFileKind, file_path: file, content: buf.subarray(0, read).toString('utf8'), size: st.size, truncated: st.size > MAX_STATE_FILE_BYTES };
}

/** True when `org` (missing = the default org) is one of `filter`. */
function orgMatches(filter: OrgFilter, org: string | undefined): boolean {
  const o = org || DEFAULT_ORG_UUID;
  return typeof filter === 'string' ? filter === o : filter.includes(o);
}
