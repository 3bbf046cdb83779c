/**
 * Folder ⇄ prefix synchronisation (delta: a file whose size and MD5 match the object's ETag is
 * skipped; multipart ETags are not MD5s, so there size plus "object not older than the file"
 * decides). Uploads walk the folder without following links; downloads take keys from the
 * listing as untrusted names (keys.ts localTarget) and refuse, and count as errors, those that
 * would leave the destination — nothing is written for them.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { messageOf } from '../errors.js';
import type { StorageHandle } from './client.js';
import { folderPrefix, localTarget } from './keys.js';
import { downloadFile, listObjects, uploadFile, type ObjectInfo, type Progress } from './ops.js';

/** What one sync did, key by key (relative to the prefix for downloads, keys for uploads). */
export interface SyncResult {
  uploaded: string[];
  downloaded: string[];
  skipped: string[];
  errors: { path: string; error: string }[];
}

/** Reports each file as it is handled ('uploading', 'uploaded', 'skipped', 'error', …). */
export type SyncEvent = (action: string, path: string, detail?: string) => void;

async function md5Of(file: string): Promise<string> {
  const h = createHash('md5');
  for await (const c of createReadStream(file)) h.update(c as Buffer);
  return h.digest('hex');
}

/** True when the local file already holds the object's content (by the rule in the header). */
export async function sameContent(file: string, obj: ObjectInfo): Promise<boolean> {
  let st;
  try {
    st = await lstat(file);
  } catch {
    return false;
  }
  if (!st.isFile() || st.size !== obj.size) return false;
  if (/^[0-9a-f]{32}$/i.test(obj.etag)) return (await md5Of(file)) === obj.etag.toLowerCase();
  return obj.lastModified !== '' && Date.parse(obj.lastModified) >= Math.floor(st.mtimeMs / 1000) * 1000;
}

/** The regular files below `dir` (links and special files skipped), as paths relative to it with `/`. */
export async function walkFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (d: string) => {
    const entries = await readdir(d, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const full = join(d, e.name);
      if (e.isDirectory()) await visit(full);
      else if (e.isFile()) out.push(relative(dir, full).split(sep).join('/'));
    }
  };
  const top = await lstat(dir);
  if (!top.isDirectory()) throw new Error(`not a folder: ${dir}`);
  await visit(dir);
  return out;
}

const empty = (): SyncResult => ({ uploaded: [], downloaded: [], skipped: [], errors: [] });

/** Uploads every file of `localDir` below `remotePrefix` that the bucket does not hold yet. */
export async function syncUpload(h: StorageHandle, localDir: string, remotePrefix: string, onEvent?: SyncEvent, onProgress?: (file: string) => Progress | undefined): Promise<SyncResult> {
  const prefix = folderPrefix(remotePrefix);
  const files = await walkFiles(localDir);
  const remote = new Map((await listObjects(h, prefix)).map((o) => [o.key, o]));
  const res = empty();
  for (const rel of files) {
    const key = prefix + rel;
    const file = join(localDir, rel);
    try {
      const obj = remote.get(key);
      if (obj && (await sameContent(file, obj))) {
        res.skipped.push(key);
        onEvent?.('skipped', key);
        continue;
      }
      onEvent?.('uploading', key);
      await uploadFile(h, file, key, onProgress?.(key));
      res.uploaded.push(key);
      onEvent?.('uploaded', key);
    } catch (err) {
      res.errors.push({ path: key, error: messageOf(err) });
      onEvent?.('error', key, messageOf(err));
    }
  }
  return res;
}

/** Downloads every object below `remotePrefix` into `localDir` that is not there already. */
export async function syncDownload(h: StorageHandle, remotePrefix: string, localDir: string, onEvent?: SyncEvent, onProgress?: (file: string) => Progress | undefined): Promise<SyncResult> {
  const prefix = folderPrefix(remotePrefix);
  const objects = await listObjects(h, prefix);
  const res = empty();
  for (const obj of objects) {
    const rel = obj.key.slice(prefix.length);
    // Folder markers some tools create ("a/b/") hold no file.
    if (rel === '' || rel.endsWith('/')) continue;
    try {
      const target = await localTarget(localDir, rel);
      if (await sameContent(target, obj)) {
        res.skipped.push(rel);
        onEvent?.('skipped', rel);
        continue;
      }
      onEvent?.('downloading', rel);
      await downloadFile(h, obj.key, target, onProgress?.(rel));
      res.downloaded.push(rel);
      onEvent?.('downloaded', rel);
    } catch (err) {
      res.errors.push({ path: rel, error: messageOf(err) });
      onEvent?.('error', rel, messageOf(err));
    }
  }
  return res;
}
