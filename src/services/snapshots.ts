/**
 * Workspace snapshots, shared by /snapshots* and `osm snapshot`: export (zip of the folder plus the
 * database rows), listing, download, delete, and import from a file or an http(s) URL.
 */
import { createWriteStream, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { errors, isOsmError, messageOf } from '../errors.js';
import type { AsyncStore, Store } from '../store/index.js';
import type { LoadedSettings } from '../settings/index.js';
import { isSafeName } from '../util/fs-safe.js';
import { writeSnapshotZip, type ZipResult } from '../snapshot/export.js';
import { importSnapshotZip, type SnapshotImportResult } from '../snapshot/import.js';
import { downloadSnapshot } from '../snapshot/download.js';
import { isSnapshotName, snapshotFileName, workspaceFromFileName } from '../snapshot/names.js';
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../snapshot/safe-unzip.js';
import { UNRESTRICTED, workspaceInScope, type Scope } from '../auth/scope.js';

type SnapshotApp = { repos: AsyncStore; settings: () => LoadedSettings };

export const IMPORT_WARNING = 'Imported workspace database state may be unstable. Only import from trusted sources.';

/** The snapshot folder of the current settings. */
export function snapshotDir(app: SnapshotApp): string {
  return app.settings().paths.snapshot;
}

/** Size cap of one snapshot in bytes (`server.max_snapshot_mb`, default 2048). */
export function maxSnapshotBytes(app: SnapshotApp): number {
  const mb = Number((app.settings().settings.server as { max_snapshot_mb?: number }).max_snapshot_mb ?? 2048);
  return Math.max(1, Number.isFinite(mb) ? mb : 2048) * 1024 * 1024;
}

/** Extraction limits: the defaults with the total capped by max_snapshot_mb. */
export function snapshotLimits(app: SnapshotApp): ZipLimits {
  return { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: maxSnapshotBytes(app) };
}

/** Validates a workspace name and finds its folder; 404 when neither the folder nor the row exists. */
export async function resolveWorkspace(app: SnapshotApp, workspace: string | undefined, scope: Scope = UNRESTRICTED): Promise<{ name: string; folder: string }> {
  const name = (workspace ?? '').trim();
  if (!name) throw errors.workspaceNameRequired();
  if (!isSafeName(name)) throw errors.invalidWorkspaceName();
  if (!(await workspaceInScope(app.repos, scope, name))) throw errors.workspaceNotFound(name);
  const row = await app.repos.workspaces.get(name);
  // The row's local_path (a run with another workspaces folder) is used only when it names this
  // workspace's own folder: a stray value such as '/' must never become the export root.
  const own = join(app.settings().paths.workspaces, name);
  // A link planted in the workspaces folder must not make its target exportable (GET /workspaces/{name} refuses it too).
  if (isLink(own)) throw errors.pathTraversal('workspace path');
  const elsewhere = row?.local_path && basename(row.local_path) === name ? row.local_path : undefined;
  const folder = isDir(own) ? own : elsewhere && isDir(elsewhere) ? elsewhere : own;
  if (!row && !isDir(folder)) throw errors.workspaceNotFound(name);
  return { name, folder };
}

export interface ExportResult extends ZipResult {
  name: string;
  path: string;
  size: number;
}

/** Writes `<snapshot dir>/<workspace>_<unix ts>.zip` (or `dest`) atomically; returns where and how big. */
export async function exportSnapshot(app: SnapshotApp, input: { workspace?: string; includeArtifacts?: boolean; dest?: string }, scope: Scope = UNRESTRICTED): Promise<ExportResult> {
  const ws = await resolveWorkspace(app, input.workspace, scope);
  const dir = input.dest ? dirname(resolve(input.dest)) : snapshotDir(app);
  mkdirSync(dir, { recursive: true });
  const part = join(dir, `.${ws.name}.${randomBytes(4).toString('hex')}.part`);
  try {
    const result = await writeSnapshotZip(app.repos, { workspace: ws.name, folder: ws.folder, includeArtifacts: input.includeArtifacts !== false }, createWriteStream(part, { flags: 'wx' }));
    let path: string;
    if (input.dest) {
      path = resolve(input.dest);
      renameSync(part, path);
    } else {
      path = publish(part, dir, ws.name);
    }
    return { ...result, name: basename(path), path, size: statSync(path).size };
  } catch (err) {
    rmSync(part, { force: true });
    throw isOsmError(err) ? err : errors.snapshotExport(messageOf(err));
  }
}

/**
 * Gives a finished export its `<workspace>_<unix ts>.zip` name without replacing an existing
 * snapshot: two exports within one second get consecutive timestamps (link fails on EEXIST, so
 * concurrent exports cannot take the same name).
 */
function publish(part: string, dir: string, workspace: string): string {
  const now = new Date();
  for (let i = 0; ; i++) {
    const path = join(dir, snapshotFileName(workspace, new Date(now.getTime() + i * 1000)));
    try {
      linkSync(part, path);
      unlinkSync(part);
      return path;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Filesystems without hard links: a plain check-then-rename (a race only between two exports).
      if ((code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') && !existsSync(path)) {
        renameSync(part, path);
        return path;
      }
      if ((code !== 'EEXIST' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') || i >= 1000) throw err;
    }
  }
}

/** A fresh export streamed without storing it (legacy download); errors after the start end the stream. */
export async function streamSnapshot(app: SnapshotApp, workspace: string, scope: Scope = UNRESTRICTED): Promise<{ name: string; stream: Readable }> {
  const ws = await resolveWorkspace(app, workspace, scope);
  const out = new PassThrough();
  writeSnapshotZip(app.repos, { workspace: ws.name, folder: ws.folder, includeArtifacts: true }, out).catch((err: unknown) => out.destroy(err as Error));
  return { name: snapshotFileName(ws.name), stream: out };
}

/** A stored snapshot is visible when the workspace its name implies is (a bound credential never sees others' archives). */
async function snapshotInScope(app: SnapshotApp, scope: Scope, name: string): Promise<boolean> {
  if (scope.orgs === null) return true;
  const ws = workspaceFromFileName(name);
  return ws !== '' && (await app.repos.workspaces.get(ws)) !== undefined && (await workspaceInScope(app.repos, scope, ws));
}

export interface SnapshotFile {
  name: string;
  path: string;
  size: number;
  created_at: string;
}

/** The `*.zip` files of the snapshot folder, newest first. */
export async function listSnapshots(app: SnapshotApp, scope: Scope = UNRESTRICTED): Promise<{ data: SnapshotFile[]; count: number; path: string }> {
  const dir = snapshotDir(app);
  const data: SnapshotFile[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    names = [];
  }
  for (const name of names) {
    if (!isSnapshotName(name) || !(await snapshotInScope(app, scope, name))) continue;
    const path = join(dir, name);
    try {
      const st = lstatSync(path);
      if (st.isFile()) data.push({ name, path, size: st.size, created_at: st.mtime.toISOString() });
    } catch {
      // removed meanwhile
    }
  }
  data.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.name < b.name ? 1 : -1));
  return { data, count: data.length, path: dir };
}

/** One stored snapshot by name: 400 Invalid snapshot name, 404 Snapshot not found. */
export async function snapshotFile(app: SnapshotApp, name: string, scope: Scope = UNRESTRICTED): Promise<SnapshotFile> {
  if (!isSnapshotName(name)) throw errors.invalidSnapshotName();
  if (!(await snapshotInScope(app, scope, name))) throw errors.snapshotNotFound(name);
  const path = join(snapshotDir(app), name);
  try {
    const st = lstatSync(path);
    if (st.isFile()) return { name, path, size: st.size, created_at: st.mtime.toISOString() };
  } catch {
    // not there
  }
  throw errors.snapshotNotFound(name);
}

/** Deletes one stored snapshot. */
export async function deleteSnapshot(app: SnapshotApp, name: string, scope: Scope = UNRESTRICTED): Promise<{ message: string; name: string }> {
  const file = await snapshotFile(app, name, scope);
  unlinkSync(file.path);
  return { message: 'Snapshot deleted successfully', name };
}

export interface ImportInput {
  /** A zip on this machine (an upload saved by the route, or a CLI path) and the name it came with. */
  file?: { path: string; name?: string };
  /** An http(s) URL to download. */
  url?: string;
  force?: boolean;
  skipDb?: boolean;
  /** Who asked: an API caller may not make the daemon fetch from private addresses (default api). */
  caller?: 'api' | 'cli';
}

export interface ImportResponse extends SnapshotImportResult {
  message: string;
  data_source: 'imported';
  warning: string;
}

/** Imports a snapshot from a file or URL; see src/snapshot/import.ts for the safety rules. */
export async function importSnapshot(app: SnapshotApp, input: ImportInput): Promise<ImportResponse> {
  const url = input.url?.trim();
  if (!input.file && !url) throw errors.snapshotSourceRequired();
  let tmp: string | undefined;
  try {
    let file = input.file;
    if (!file) {
      tmp = mkdtempSync(join(tmpdir(), 'osm-snapshot-'));
      const dest = join(tmp, 'download.zip');
      const allowPrivate = input.caller === 'cli' || Boolean((app.settings().settings.server as { allow_private_snapshot_urls?: boolean }).allow_private_snapshot_urls);
      await downloadSnapshot(url!, dest, { maxBytes: maxSnapshotBytes(app), allowPrivate });
      file = { path: dest, name: urlFileName(url!) };
    } else if (!isFile(file.path)) {
      throw errors.importFileNotFound(file.path);
    }
    const result = await importSnapshotZip(app.repos, {
      file: file.path,
      fileName: file.name,
      workspacesDir: app.settings().paths.workspaces,
      force: Boolean(input.force),
      forceHint: input.caller === 'cli' ? '--force' : 'force=true',
      skipDb: Boolean(input.skipDb),
      limits: snapshotLimits(app),
    });
    return { message: 'Workspace imported successfully', ...result, data_source: 'imported', warning: IMPORT_WARNING };
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

/** The last path segment of a URL (the snapshot's file name), or snapshot.zip. */
function urlFileName(url: string): string {
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    return last || 'snapshot.zip';
  } catch {
    return 'snapshot.zip';
  }
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
