/**
 * Artifacts across runs (GET /artifacts) and the download of one file of a workspace folder
 * (GET /artifacts/{workspace_name}?artifact_path=…).
 *
 * The download only ever serves a regular file inside the workspace's folder: the relative path
 * is cleaned and refused when it is absolute or climbs out; the folder and the file are resolved
 * with their symlinks and the file must still be inside the folder; the file is opened without
 * following a final symlink and without blocking (a FIFO cannot hang the request), and the opened
 * descriptor is checked again (its /proc path, or its device and inode) so a path swapped between
 * the check and the open is caught. The file is streamed, never read whole.
 */
import { constants as fsc } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, normalize, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { OsmError } from '../errors.js';
import type { ArtifactRecord } from '../store/index.js';
import { isInside } from '../util/fs-safe.js';
import type { AppContext } from './context.js';
import { artifactToApi } from './run-control.js';
import { checkWorkspaceName } from './workspaces.js';
import { UNRESTRICTED, workspaceInScope, type Scope } from '../auth/scope.js';
import { openStoredArtifact } from './artifact-storage.js';

/** Errors of the download, word for word from the reference (§1.8). */
export const artifactErrors = {
  pathRequired: () => new OsmError('OSM_ERR_ARTIFACT_PATH_REQUIRED', 400, 'artifact_path query parameter is required'),
  invalidPath: () => new OsmError('OSM_ERR_ARTIFACT_PATH_INVALID', 400, 'Invalid artifact_path'),
  traversal: () => new OsmError('OSM_ERR_ARTIFACT_TRAVERSAL', 403, 'Path traversal attempt detected'),
  notFound: () => new OsmError('OSM_ERR_ARTIFACT_NOT_FOUND', 404, 'Artifact not found'),
  notAFile: () => new OsmError('OSM_ERR_ARTIFACT_NOT_FILE', 400, 'artifact_path must point to a file'),
  readFailed: (detail: string) => new OsmError('OSM_ERR_ARTIFACT_READ', 500, `Failed to read artifact: ${detail}`),
};

export type ApiArtifact = ReturnType<typeof artifactToApi> & { path_exists?: true; path_is_dir?: boolean };

export interface ArtifactListQuery {
  workspace?: string;
  search?: string;
  verify_exist?: boolean;
  offset: number;
  limit: number;
}

/** What is on disk at an artifact's path: undefined when nothing (relative paths never resolve). */
async function diskEntry(path: string): Promise<{ dir: boolean } | undefined> {
  if (!path || !isAbsolute(path) || path.includes('\0')) return undefined;
  try {
    return { dir: (await stat(path)).isDirectory() };
  } catch {
    return undefined;
  }
}

/**
 * GET /artifacts: newest first. With `verify_exist`, rows whose path is missing are dropped and the
 * rest gain `path_exists` and `path_is_dir`; the total still counts every matching row (reference).
 */
export async function listArtifacts(app: AppContext, q: ArtifactListQuery, scope: Scope = UNRESTRICTED): Promise<{ data: ApiArtifact[]; total: number }> {
  const res = await app.repos.artifacts.list({ workspace: q.workspace || undefined, search: q.search || undefined, org_uuid: scope.orgs ?? undefined }, { offset: q.offset, limit: q.limit });
  const rows: ApiArtifact[] = res.data.map((a: ArtifactRecord) => artifactToApi(a));
  if (!q.verify_exist) return { data: rows, total: res.total };
  const entries = await Promise.all(rows.map((a) => diskEntry(a.artifact_path)));
  const data: ApiArtifact[] = [];
  rows.forEach((a, i) => {
    const e = entries[i];
    if (e) data.push({ ...a, path_exists: true, path_is_dir: e.dir });
  });
  return { data, total: res.total };
}

const TEXT = 'text/plain; charset=utf-8';
const CONTENT_TYPES: Record<string, string> = {
  '.txt': TEXT, '.log': TEXT, '.out': TEXT, '.lst': TEXT, '.conf': TEXT, '.ini': TEXT, '.sh': TEXT,
  '.json': 'application/json', '.jsonl': 'application/x-ndjson', '.ndjson': 'application/x-ndjson',
  '.yaml': 'application/yaml', '.yml': 'application/yaml', '.toml': 'application/toml',
  '.md': 'text/markdown; charset=utf-8', '.markdown': 'text/markdown; charset=utf-8',
  '.html': 'text/html; charset=utf-8', '.htm': 'text/html; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8', '.tsv': 'text/tab-separated-values; charset=utf-8', '.xml': 'application/xml',
  '.js': 'text/javascript; charset=utf-8', '.pdf': 'application/pdf',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp', '.svg': 'image/svg+xml', '.ico': 'image/x-icon',
  '.zip': 'application/zip', '.gz': 'application/gzip', '.tgz': 'application/gzip', '.tar': 'application/x-tar', '.7z': 'application/x-7z-compressed',
};

/** The content type of a file by its extension (case-insensitive); unknown extensions are binary. */
export function contentTypeFor(path: string): string {
  return CONTENT_TYPES[extname(basename(path)).toLowerCase()] ?? 'application/octet-stream';
}

/** Go's filepath.Clean for a relative path: normalised, no trailing slash, '' → '.'. */
function cleanRelative(p: string): string {
  const n = normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

/** Throws `invalidPath` unless `raw` is a relative path that stays below its folder. */
export function checkArtifactPath(raw: string): string {
  if (raw.includes('\0')) throw artifactErrors.invalidPath();
  const cleaned = cleanRelative(raw);
  if (cleaned === '.' || cleaned === '..' || isAbsolute(cleaned) || cleaned.startsWith('../')) throw artifactErrors.invalidPath();
  return cleaned;
}

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'ELOOP', 'EINVAL']);

/** Maps a filesystem error to the reference's answers: missing → 404, anything else → 500 with its code. */
function fsError(err: unknown): OsmError {
  const code = (err as NodeJS.ErrnoException)?.code ?? '';
  if (MISSING.has(code)) return artifactErrors.notFound();
  return artifactErrors.readFailed(code || 'unreadable file');
}

/**
 * An absolute `artifact_path` as `GET /runs/{id}/artifacts` hands it out, made relative to the
 * workspace folder when it lies inside it (under the folder's recorded or resolved spelling);
 * anything else is returned unchanged for checkArtifactPath to judge (absolute → refused).
 */
async function relativeToWorkspace(app: AppContext, name: string, base: string, raw: string): Promise<string> {
  if (!isAbsolute(raw) || raw.includes('\0')) return raw;
  const local = (await app.repos.workspaces.get(name))?.local_path ?? '';
  const spellings = [base, local && isAbsolute(local) ? resolve(local) : '', resolve(app.settings().paths.workspaces, name)].filter(Boolean);
  const full = resolve(raw);
  for (const root of spellings) {
    if (full !== root && isInside(root, full)) return relative(root, full);
  }
  return raw;
}

/** The folder a workspace's files live in: its row's local_path when set, else <workspaces>/<name>. */
async function workspaceBase(app: AppContext, name: string): Promise<string> {
  const row = await app.repos.workspaces.get(name);
  const local = row?.local_path ?? '';
  if (local && isAbsolute(local)) {
    try {
      return await realpath(local);
    } catch (err) {
      throw fsError(err);
    }
  }
  const root = resolve(app.settings().paths.workspaces);
  let real: string;
  try {
    real = await realpath(join(root, name));
  } catch (err) {
    throw fsError(err);
  }
  // A folder of the workspaces folder that links elsewhere is not the workspace's folder.
  let realRoot = root;
  try {
    realRoot = await realpath(root);
  } catch {
    // the root cannot be missing when a folder inside it resolved
  }
  if (!isInside(realRoot, real)) throw artifactErrors.traversal();
  return real;
}

/** Where an open descriptor really points (Linux: /proc/self/fd), or undefined when unknown. */
async function descriptorPath(fh: FileHandle): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${fh.fd}`);
  } catch {
    return undefined;
  }
}

export interface ArtifactDownload {
  stream: Readable;
  size: number;
  contentType: string;
  fileName: string;
}

/** Where to send the client instead (storage.serve: redirect). */
export interface ArtifactRedirect {
  redirect: string;
  fileName: string;
}

/**
 * GET /artifacts/{workspace_name}?artifact_path=: one regular file of the workspace folder, opened
 * for streaming; when it is not on disk but storage holds it, the stored copy (artifact-storage.ts).
 */
export async function openArtifact(app: AppContext, workspaceName: string, artifactPath: string | undefined, scope: Scope = UNRESTRICTED): Promise<ArtifactDownload | ArtifactRedirect> {
  checkWorkspaceName(workspaceName);
  if (!(await workspaceInScope(app.repos, scope, workspaceName))) throw artifactErrors.notFound();
  if (artifactPath === undefined || artifactPath === '') throw artifactErrors.pathRequired();
  try {
    return await openLocalArtifact(app, workspaceName, artifactPath);
  } catch (err) {
    if (!(err instanceof OsmError) || err.code !== 'OSM_ERR_ARTIFACT_NOT_FOUND') throw err;
    const stored = await openStoredArtifact(app, workspaceName, artifactPath, checkArtifactPath);
    if (!stored) throw err;
    return 'redirect' in stored ? stored : { ...stored, contentType: contentTypeFor(stored.fileName) };
  }
}

async function openLocalArtifact(app: AppContext, workspaceName: string, artifactPath: string): Promise<ArtifactDownload> {
  const base = await workspaceBase(app, workspaceName);
  const rel = checkArtifactPath(await relativeToWorkspace(app, workspaceName, base, artifactPath));
  const full = join(base, rel);
  if (!isInside(base, full)) throw artifactErrors.invalidPath();
  let real: string;
  try {
    real = await realpath(full);
  } catch (err) {
    throw fsError(err);
  }
  if (!isInside(base, real)) throw artifactErrors.traversal();

  let fh: FileHandle;
  try {
    fh = await open(real, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch (err) {
    // ELOOP: the last component became a link after it was resolved.
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw artifactErrors.traversal();
    throw fsError(err);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw artifactErrors.notAFile();
    const opened = await descriptorPath(fh);
    if (opened !== undefined) {
      if (!isInside(base, opened)) throw artifactErrors.traversal();
    } else {
      const now = await stat(real).catch(() => undefined);
      if (!now || now.dev !== st.dev || now.ino !== st.ino) throw artifactErrors.traversal();
    }
    return { stream: fh.createReadStream({ autoClose: true }), size: st.size, contentType: contentTypeFor(rel), fileName: basename(rel) };
  } catch (err) {
    await fh.close().catch(() => undefined);
    if (err instanceof OsmError) throw err;
    throw fsError(err);
  }
}

