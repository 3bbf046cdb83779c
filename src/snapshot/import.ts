/**
 * Imports a snapshot zip as a workspace. Order of work, and why:
 * 1. every entry is checked (safe-unzip) before anything is written;
 * 2. files are extracted into a temporary folder inside the workspaces folder (same filesystem,
 *    so the swap is a rename), the database rows into a sibling folder;
 * 3. the old workspace folder (with force) is renamed aside and the new one renamed in;
 * 4. the rows are restored in ONE transaction; if that fails, the swap is undone, so a failed
 *    import leaves both the existing folder and the database as they were.
 * The workspace is the zip's single top-level folder, else (legacy zips without one) the file
 * name without `_<timestamp>.zip`; either must be a safe name.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { errors, messageOf } from '../errors.js';
import type { AsyncStore } from '../store/index.js';
import type { RestoreCounts } from '../store/workspace-dump.js';
import { DUMP_TABLES } from '../store/workspace-dump.js';
import { isSafeName, safeJoin } from '../util/fs-safe.js';
import { DB_FOLDER } from './export.js';
import { folderSource } from './db-files.js';
import { workspaceFromFileName } from './names.js';
import { DEFAULT_ZIP_LIMITS, extractEntries, inspectZip, type ZipEntry, type ZipLimits, type ZipPlan } from './safe-unzip.js';

export interface SnapshotImportRequest {
  /** The zip on disk. */
  file: string;
  /** The name the zip came with (upload or URL); default: the file's base name. */
  fileName?: string;
  workspacesDir: string;
  force: boolean;
  /** How the caller spells "force" in the refusal (API: force=true, CLI: --force). */
  forceHint?: string;
  skipDb: boolean;
  limits?: ZipLimits;
}

export interface SnapshotImportResult {
  workspace: string;
  local_path: string;
  files_count: number;
  /** Rows restored per table (absent with skipDb). */
  rows?: RestoreCounts;
}

const DB_FILES = new Set(DUMP_TABLES.map((t) => `${t}.jsonl`));

/** The workspace name and the path of each entry inside the workspace. */
function layout(plan: ZipPlan, fileName: string): { name: string; rel: (e: ZipEntry) => string } {
  const firsts = new Set(plan.entries.map((e) => e.path.split('/')[0]!));
  const top = firsts.size === 1 && plan.entries.every((e) => e.dir || e.path.includes('/')) ? [...firsts][0]! : undefined;
  const name = top ?? workspaceFromFileName(fileName);
  if (!name || !isSafeName(name) || name.startsWith('.')) {
    throw errors.snapshotRejected(`cannot tell a valid workspace name from the archive (${JSON.stringify(top ?? basename(fileName))})`);
  }
  return { name, rel: top ? (e) => (e.path === top ? '' : e.path.slice(top.length + 1)) : (e) => e.path };
}

/** Imports `req.file` into `<workspacesDir>/<workspace>` (and its rows into the store unless skipDb). */
export async function importSnapshotZip(repos: AsyncStore, req: SnapshotImportRequest): Promise<SnapshotImportResult> {
  const limits = req.limits ?? DEFAULT_ZIP_LIMITS;
  const plan = await inspectZip(req.file, limits);
  const { name, rel } = layout(plan, req.fileName ?? basename(req.file));
  const target = join(req.workspacesDir, name);
  const folderExists = pathExists(target);
  const rowExists = !req.skipDb && (await repos.workspaces.get(name)) !== undefined;
  if ((folderExists || rowExists) && !req.force) {
    // 409 without the server's path (the API answered 500 with it before).
    throw errors.snapshotWorkspaceExists(name, req.forceHint ?? 'force=true');
  }
  const active = (await repos.runs.list({ workspace: name, status: 'running' }, { offset: 0, limit: 1 })).total;
  if (active > 0 && req.force) throw errors.workspaceBusy(name, active);

  mkdirSync(req.workspacesDir, { recursive: true });
  const tmp = mkdtempSync(join(req.workspacesDir, '.osm-import-'));
  const filesDir = join(tmp, 'files');
  const dbDir = join(tmp, 'db');
  let aside: string | undefined;
  let swapped = false;
  try {
    mkdirSync(filesDir);
    mkdirSync(dbDir);
    let filesCount = 0;
    let hasDump = false;
    await extractEntries(plan, (e) => {
      const r = rel(e);
      if (r === '' || r === DB_FOLDER) return null;
      if (r.startsWith(`${DB_FOLDER}/`)) {
        const file = r.slice(DB_FOLDER.length + 1);
        if (e.dir || !DB_FILES.has(file)) return null;
        hasDump = true;
        return join(dbDir, file);
      }
      if (!e.dir) filesCount++;
      return safeJoin(filesDir, r);
    }, limits);

    if (pathExists(target)) {
      aside = join(req.workspacesDir, `.osm-old-${name}-${randomBytes(4).toString('hex')}`);
      renameSync(target, aside);
    }
    renameSync(filesDir, target);
    swapped = true;

    let rows: RestoreCounts | undefined;
    if (!req.skipDb) {
      try {
        rows = await repos.workspaces.restoreDump(name, folderSource(dbDir), { localPath: target, replace: req.force && hasDump });
      } catch (err) {
        throw errors.snapshotImport(`database restore failed: ${messageOf(err)}`);
      }
    }
    swapped = false;
    if (aside) rmSync(aside, { recursive: true, force: true });
    return { workspace: name, local_path: target, files_count: filesCount, ...(rows ? { rows } : {}) };
  } catch (err) {
    if (swapped) undoSwap(target, filesDir, aside);
    throw err;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Puts the previous folder back after a failed restore. */
function undoSwap(target: string, filesDir: string, aside: string | undefined): void {
  try {
    renameSync(target, filesDir);
  } catch {
    rmSync(target, { recursive: true, force: true });
  }
  if (aside && existsSync(aside)) renameSync(aside, target);
}

function pathExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
