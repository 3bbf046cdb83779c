/**
 * The master's side of shipped files (issue 15, "results in one place"): a worker sends the run's
 * log folder (output journal, step log files) and its artifact files as fenced `file` records
 * (records.ts); each chunk is written here at the same path below the MASTER's workspace folder of
 * the run, so GET /runs/{id}/logs, `osm logs` and the artifact downloads read them like the files
 * of a local run.
 *
 * Nothing in a record is trusted: the path was checked by the schema (relative, normalized, safe
 * names only), the workspace must be the run's own and a safe name, every folder on the way is
 * created or must be a real folder (a symlink is refused, never followed), the file is opened
 * without following a final link and must be a regular file, and a run writes at most
 * `distributed.ship_files_max_mb` (checked per chunk against what this master received for the
 * attempt). Chunks of a superseded attempt are dropped. A replayed chunk writes the same bytes at
 * the same offset: a chunk at offset 0 starts the file afresh, the `eof` chunk cuts it at its end.
 */
import { closeSync, constants as fsc, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { AppContext } from '../services/context.js';
import type { RunRecord } from '../store/index.js';
import { isInside, isSafeName } from '../util/fs-safe.js';
import { isShippablePath, type FileRecord } from './records.js';
import { STATE_FILES } from '../engine/state-files.js';

const MB = 1024 * 1024;

/** Bytes received per run: the latest attempt and the end offset of each of its files. */
interface Usage {
  attempt: number;
  files: Map<string, number>;
  total: number;
  /** Files a chunk of which could not be written here: their later chunks are refused too (no file with a hole). */
  broken: Set<string>;
}

/**
 * An error of the file system (it names its system call: EACCES, ENOSPC, EROFS, ENOTDIR …), not
 * of the database: retrying the record would fail the same way and hold up every record after it.
 */
function isFileSystemError(err: unknown): err is NodeJS.ErrnoException {
  const e = err as NodeJS.ErrnoException | undefined;
  return typeof e?.syscall === 'string' && typeof e.code === 'string';
}

const usage = new WeakMap<AppContext, Map<string, Usage>>();

function usageOf(app: AppContext): Map<string, Usage> {
  let m = usage.get(app);
  if (!m) usage.set(app, (m = new Map()));
  return m;
}

/** Forgets the byte count of a run (its result was recorded). */
export function forgetShippedFiles(app: AppContext, runUuid: string): void {
  usage.get(app)?.delete(runUuid);
}

/** The cap of shipped bytes per run on this machine (`distributed.ship_files_max_mb`). */
export function shipCapBytes(app: AppContext): number {
  return (app.settings().settings.distributed?.ship_files_max_mb ?? 256) * MB;
}

/**
 * The folder of a workspace on this machine as the downloads and the log reader find it: its
 * row's absolute `local_path`, else `<workspaces>/<name>`.
 */
export async function workspaceRoot(app: AppContext, name: string): Promise<string> {
  return rootOf(app, name, await app.repos.workspaces.get(name));
}

function rootOf(app: AppContext, name: string, row: { local_path?: string | null } | undefined): string {
  return row?.local_path && isAbsolute(row.local_path) ? resolve(row.local_path) : join(resolve(app.settings().paths.workspaces), name);
}

/**
 * Where a shipped file (`rel`, workspace-relative) lives on the master, below `root` (the
 * master's folder of `workspace`, see workspaceRoot); undefined for a path that is not shippable.
 */
export function shippedFilePath(root: string, workspace: string, rel: string): string | undefined {
  if (!isSafeName(workspace) || !isShippablePath(rel)) return undefined;
  return join(root, rel);
}

/** Creates the master's row of a workspace a worker's rows or files arrive for (its folder is the master's own). */
export async function ensureWorkspace(app: AppContext, name: string, at: string, workflow: string): Promise<{ local_path?: string | null }> {
  const row = await app.repos.workspaces.get(name);
  if (row) return row;
  return app.repos.workspaces.upsertRunInfo({ name, local_path: join(app.settings().paths.workspaces, name), last_run: at, run_workflow: workflow });
}

class Refused extends Error {}

/** The real folder of the workspace `row` (created when missing); refused when `<workspaces>/<name>` resolves outside the workspaces folder. */
function realWorkspaceRoot(app: AppContext, name: string, row: { local_path?: string | null }): string {
  const root = rootOf(app, name, row);
  mkdirSync(root, { recursive: true });
  const real = realpathSync(root);
  if (!(row?.local_path && isAbsolute(row.local_path))) {
    const base = realpathSync(resolve(app.settings().paths.workspaces));
    if (!isInside(base, real) || real === base) throw new Refused(`workspace folder ${name} resolves outside the workspaces folder`);
  }
  return real;
}

/**
 * Creates (or, with `create` false, only walks) the folders of `parts` below `root`; a symlink or a
 * non-folder on the way is refused. Undefined when a folder is missing and `create` is false.
 */
function folderFor(root: string, parts: string[], create = true): string | undefined {
  let dir = root;
  for (const seg of parts) {
    const next = join(dir, seg);
    // Looked at first: the folders of a run's files exist after its first chunk, and a failed
    // mkdir (EEXIST) costs an exception per folder per record.
    let st = lstatSync(next, { throwIfNoEntry: false });
    if (!st) {
      if (!create) return undefined;
      try {
        mkdirSync(next);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      st = lstatSync(next);
    }
    if (st.isSymbolicLink() || !st.isDirectory()) throw new Refused(`${seg} on the way is not a plain folder`);
    dir = next;
  }
  return dir;
}

/** Writes one chunk (positional); cuts the file at `offset` 0 (a fresh copy) and at `eof`. */
function writeChunk(path: string, offset: number, buf: Buffer, eof: boolean): void {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_NOFOLLOW | fsc.O_NONBLOCK, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Refused('the file is a symlink');
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Refused('not a regular file');
    // Cut only what must go: a truncation to 0 of a file with blocks makes ext4 (auto_da_alloc)
    // start writing it back at close, milliseconds per file. A whole file in one chunk (offset 0
    // and eof) overwrites and cuts at its end instead; a fresh file has nothing to cut.
    if (offset === 0 && !eof && st.size > 0) ftruncateSync(fd, 0);
    let done = 0;
    while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, offset + done);
    if (eof && st.size > offset + buf.length) ftruncateSync(fd, offset + buf.length);
  } finally {
    closeSync(fd);
  }
}

/** The file is in object storage: a copy of this machine's at its path (an earlier run's) would shadow it. */
function dropLocalCopy(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (!st.isFile()) throw new Refused('not a regular file');
  unlinkSync(path);
}

/**
 * What one pass over a batch of records has already checked: the real folder of each workspace
 * (its row read or created once) and the folders below it found plain (not a link) or made. A
 * batch holds the few records of a handful of runs; it is dropped when the batch is applied.
 */
export interface FileApplyCache {
  roots: Map<string, string>;
  folders: Set<string>;
}

export function newFileApplyCache(): FileApplyCache {
  return { roots: new Map(), folders: new Set() };
}

/**
 * Appends a run's lines of its workspace's run-execution.log (a worker's result carries them) to
 * the master's file of `workspace`: each worker's own file holds only the runs it executed. The
 * file is opened like a shipped one — never through a link, a regular file only.
 */
export async function appendExecutionLog(app: AppContext, run: RunRecord, workspace: string, text: string, cache: FileApplyCache = newFileApplyCache()): Promise<void> {
  if (text === '') return;
  if (!isSafeName(workspace)) throw new Error(`workspace ${JSON.stringify(workspace)} is not a safe name`);
  let fd: number;
  try {
    // The pass's file records of the run found the folder already, most of the time.
    let root = cache.roots.get(workspace);
    if (root === undefined) {
      root = realWorkspaceRoot(app, workspace, await ensureWorkspace(app, workspace, new Date().toISOString(), run.workflow_name));
      cache.roots.set(workspace, root);
    }
    fd = openSync(join(root, STATE_FILES.executionLog), fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT | fsc.O_NOFOLLOW | fsc.O_NONBLOCK, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${STATE_FILES.executionLog} of workspace ${workspace} is a symlink: not written`);
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${STATE_FILES.executionLog} of workspace ${workspace} is not a regular file: not written`);
    const buf = Buffer.from(text);
    let done = 0;
    while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
  } finally {
    closeSync(fd);
  }
}

/**
 * Applies one `file` record of `run` (the master's row). Returns undefined when written or
 * dropped as superseded, else why it was refused (nothing is written then). `latest` is the
 * latest attempt the master knows; `cache` is the pass's (see FileApplyCache).
 */
export async function applyFileRecord(app: AppContext, run: RunRecord, rec: FileRecord & { attempt: number }, latest: number, cache: FileApplyCache = newFileApplyCache()): Promise<string | undefined> {
  if (rec.attempt < latest) return undefined;
  if (!isSafeName(rec.workspace) || rec.workspace !== run.workspace) return `workspace ${JSON.stringify(rec.workspace)} is not the run's workspace`;
  if (!isShippablePath(rec.path)) return `path ${JSON.stringify(rec.path)} is not a relative, normalized path of safe names`;
  const buf = Buffer.from(rec.data, 'base64');
  const end = rec.offset + buf.length;
  const runs = usageOf(app);
  let u = runs.get(rec.run_uuid);
  if (!u || u.attempt !== rec.attempt) runs.set(rec.run_uuid, (u = { attempt: rec.attempt, files: new Map(), total: 0, broken: new Set() }));
  if (rec.offset === 0) u.broken.delete(rec.path);
  else if (u.broken.has(rec.path)) return 'an earlier chunk of this file could not be written on the master';
  const before = u.files.get(rec.path) ?? 0;
  const total = u.total - before + Math.max(before, end);
  const cap = shipCapBytes(app);
  if (total > cap) return `over the cap of shipped files per run (${cap} bytes, distributed.ship_files_max_mb)`;
  if (rec.stored && buf.length > 0) return 'a stored reference carries no bytes';
  try {
    let root = cache.roots.get(rec.workspace);
    if (root === undefined) {
      root = realWorkspaceRoot(app, rec.workspace, await ensureWorkspace(app, rec.workspace, rec.at, run.workflow_name));
      cache.roots.set(rec.workspace, root);
    }
    const parts = rec.path.split('/');
    const folders = parts.slice(0, -1);
    const known = join(root, ...folders);
    const dir = cache.folders.has(known) ? known : folderFor(root, folders, !rec.stored);
    if (dir === undefined) return undefined;
    if (!isInside(root, dir)) return 'the folder resolves outside the workspace folder';
    cache.folders.add(dir);
    const file = join(dir, parts[parts.length - 1]!);
    if (rec.stored) dropLocalCopy(file);
    else writeChunk(file, rec.offset, buf, rec.eof);
  } catch (err) {
    if (err instanceof Refused) return err.message;
    // Dropped (logged as refused) rather than retried: it would block the records of every run.
    if (isFileSystemError(err)) {
      u.broken.add(rec.path);
      return `cannot write it on the master: ${err.message}`;
    }
    throw err;
  }
  u.files.set(rec.path, Math.max(before, end));
  u.total = total;
  return undefined;
}
