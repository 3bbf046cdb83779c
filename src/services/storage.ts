/**
 * Object storage for the CLI (`osm storage …`) on the live settings: list, push and pull files or
 * folders, and whole workspaces (`<prefix>workspaces/<name>/…` ⇄ `<workspaces>/<name>`). A pulled
 * workspace's row says `data_source: cloud`. Keys listed from the bucket are untrusted names
 * (src/storage/keys.ts): one that would leave the destination is refused, counted and never written.
 */
import { mkdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { errors } from '../errors.js';
import { storageClient, storageFailure, type StorageHandle } from '../storage/client.js';
import { checkPrefix, folderPrefix, keySegments, workspaceKeyPrefix } from '../storage/keys.js';
import { downloadFile, listObjects, statObject, uploadFile, type ObjectInfo, type Progress } from '../storage/ops.js';
import { syncDownload, syncUpload, type SyncEvent, type SyncResult } from '../storage/sync.js';
import type { AppContext } from './context.js';
import { checkWorkspaceName } from './workspaces.js';

/** Runs `fn` with a client of the live settings, closed afterwards. */
export async function withStorage<T>(app: Pick<AppContext, 'settings'>, fn: (h: StorageHandle) => Promise<T>): Promise<T> {
  const h = storageClient(app.settings().settings);
  try {
    return await fn(h);
  } finally {
    h.close();
  }
}

export interface Listing {
  prefix: string;
  /** Sub-folders ("common prefixes") when not recursive. */
  folders: string[];
  objects: ObjectInfo[];
}

/** `osm storage ls [prefix]`: one level (folders + objects) or, with `recursive`, every object below. */
export async function listStorage(app: AppContext, prefix: string | undefined, recursive: boolean): Promise<Listing> {
  const p = checkPrefix(prefix);
  return withStorage(app, async (h) => {
    if (recursive) return { prefix: p, folders: [], objects: await listObjects(h, p) };
    const level = p === '' || p.endsWith('/') ? p : `${p}/`;
    const folders: string[] = [];
    const objects: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      let r;
      try {
        r = await h.s3.send(new ListObjectsV2Command({ Bucket: h.cfg.bucket, Prefix: level || undefined, Delimiter: '/', ContinuationToken: token }));
      } catch (err) {
        throw storageFailure(err, h.cfg, `list ${level || '(bucket)'}`);
      }
      for (const c of r.CommonPrefixes ?? []) if (c.Prefix) folders.push(c.Prefix);
      for (const o of r.Contents ?? []) if (o.Key !== undefined) objects.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified?.toISOString() ?? '', etag: String(o.ETag ?? '').replace(/"/g, '') });
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    // "a/b" names a single object when there is one, else the folder a/b/.
    if (p !== level && folders.length === 0 && objects.length === 0) {
      const one = await statObject(h, p);
      if (one) return { prefix: p, folders: [], objects: [one] };
    }
    return { prefix: level, folders, objects };
  });
}

export interface TransferOptions {
  recursive?: boolean;
  onEvent?: SyncEvent;
  /** A progress callback for one file (key), or undefined for none. */
  onProgress?: (name: string) => Progress | undefined;
}

export type TransferResult = { kind: 'file'; key: string; path: string; size: number } | ({ kind: 'folder'; prefix: string; path: string } & SyncResult);

async function kindOf(path: string): Promise<'file' | 'dir' | undefined> {
  try {
    const st = await stat(path);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
}

/** `osm storage push <local> [key]`: a file to `key` (default its name), or a folder (with `recursive`) below `key/` (default its name). */
export async function pushPath(app: AppContext, local: string, key: string | undefined, opts: TransferOptions = {}): Promise<TransferResult> {
  const path = resolve(local);
  const kind = await kindOf(path);
  if (!kind) throw errors.notFound(`no such file or folder: ${local}`);
  if (kind === 'dir') {
    if (!opts.recursive) throw errors.validation(`${local} is a folder: add --recursive to push it`);
    const prefix = folderPrefix(key ?? basename(path));
    const r = await withStorage(app, (h) => syncUpload(h, path, prefix, opts.onEvent, opts.onProgress));
    return { kind: 'folder', prefix, path, ...r };
  }
  const target = key && !key.endsWith('/') ? key : `${key ?? ''}${basename(path)}`;
  const r = await withStorage(app, (h) => uploadFile(h, path, target, opts.onProgress?.(target)));
  return { kind: 'file', key: r.key, path, size: r.size };
}

/** `osm storage pull <key> [local]`: an object to a file (default its name here), or a prefix (with `recursive`) into a folder. */
export async function pullPath(app: AppContext, key: string, local: string | undefined, opts: TransferOptions = {}): Promise<TransferResult> {
  return withStorage(app, async (h) => {
    const single = key.endsWith('/') ? null : await statObject(h, key);
    if (!single) {
      if (!opts.recursive) throw errors.storageNotFound(`${key}${key.endsWith('/') ? ' (a folder: add --recursive)' : ''}`);
      const prefix = folderPrefix(key);
      const dest = resolve(local ?? (keySegments(prefix).pop() || '.'));
      const r = await syncDownload(h, prefix, dest, opts.onEvent, opts.onProgress);
      if (r.downloaded.length + r.skipped.length + r.errors.length === 0) throw errors.storageNotFound(prefix);
      return { kind: 'folder', prefix, path: dest, ...r };
    }
    const name = keySegments(single.key).pop()!;
    let dest = resolve(local ?? name);
    if ((await kindOf(dest)) === 'dir') dest = join(dest, name);
    const r = await downloadFile(h, single.key, dest, opts.onProgress?.(single.key));
    return { kind: 'file', key: r.key, path: dest, size: r.size };
  });
}

export interface WorkspaceSync extends SyncResult {
  workspace: string;
  prefix: string;
  local_path: string;
  data_source?: string;
}

function workspaceFolder(app: AppContext, name: string): string {
  return join(resolve(app.settings().paths.workspaces), name);
}

/** `osm storage pull-workspace <name>`: downloads `<prefix>workspaces/<name>/` into the workspaces folder; the row becomes `data_source: cloud`. */
export async function pullWorkspace(app: AppContext, name: string, opts: TransferOptions = {}): Promise<WorkspaceSync> {
  checkWorkspaceName(name);
  return withStorage(app, async (h) => {
    const prefix = workspaceKeyPrefix(h.cfg.prefix, name);
    const dest = workspaceFolder(app, name);
    if ((await listObjects(h, prefix, 1)).length === 0) throw errors.storageNotFound(prefix);
    await mkdir(dest, { recursive: true });
    const r = await syncDownload(h, prefix, dest, opts.onEvent, opts.onProgress);
    await app.repos.workspaces.upsertRunInfo({ name, local_path: dest, data_source: 'cloud' });
    return { workspace: name, prefix, local_path: dest, data_source: 'cloud', ...r };
  });
}

/** `osm storage push-workspace <name>`: uploads the workspace folder below `<prefix>workspaces/<name>/`. */
export async function pushWorkspace(app: AppContext, name: string, opts: TransferOptions = {}): Promise<WorkspaceSync> {
  checkWorkspaceName(name);
  const row = await app.repos.workspaces.get(name);
  const local = row?.local_path ? resolve(row.local_path) : workspaceFolder(app, name);
  if ((await kindOf(local)) !== 'dir') throw errors.notFound(`Workspace folder not found: ${local}`);
  return withStorage(app, async (h) => {
    const prefix = workspaceKeyPrefix(h.cfg.prefix, name);
    const r = await syncUpload(h, local, prefix, opts.onEvent, opts.onProgress);
    return { workspace: name, prefix, local_path: local, ...r };
  });
}
