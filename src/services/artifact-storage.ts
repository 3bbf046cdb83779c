/**
 * The storage side of `GET /artifacts/{workspace}`: a file that is not on this machine (a worker
 * produced it, or the folder was cleaned) but that a run uploaded to `<prefix>workspaces/<ws>/<rel>`
 * is served from the bucket — streamed through the daemon (`storage.serve: stream`, the default,
 * for clients that cannot reach the storage endpoint) or as a 302 to a short presigned URL
 * (`storage.serve: redirect`). The relative path passes the same checks as a local download first.
 */
import { basename, isAbsolute, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { storageEnabled } from '../storage/config.js';
import { storageClient } from '../storage/client.js';
import { workspaceKeyPrefix } from '../storage/keys.js';
import { openObject, presignGet, statObject } from '../storage/ops.js';
import { isInside } from '../util/fs-safe.js';
import type { AppContext } from './context.js';

export type StoredArtifact = { stream: Readable; size: number; fileName: string } | { redirect: string; fileName: string };

/** Presigned artifact links live this long at most (storage.presign_expiry if shorter). */
const REDIRECT_SECONDS = 300;

/** `raw` as a path relative to the workspace folder (absolute paths inside it are made relative), or undefined. */
async function relativeName(app: AppContext, workspace: string, raw: string): Promise<string> {
  if (!isAbsolute(raw)) return raw;
  const local = (await app.repos.workspaces.get(workspace))?.local_path ?? '';
  for (const root of [local && isAbsolute(local) ? resolve(local) : '', resolve(app.settings().paths.workspaces, workspace)].filter(Boolean)) {
    const full = resolve(raw);
    if (full !== root && isInside(root, full)) return relative(root, full);
  }
  return raw;
}

/**
 * The artifact from storage, or undefined when storage is off or does not hold it. `check` is the
 * download's own path check (throws on absolute or climbing paths). Storage failures throw a
 * scrubbed storage error.
 */
export async function openStoredArtifact(app: AppContext, workspace: string, artifactPath: string, check: (rel: string) => string): Promise<StoredArtifact | undefined> {
  const settings = app.settings().settings;
  if (!storageEnabled(settings)) return undefined;
  const rel = check(await relativeName(app, workspace, artifactPath));
  const h = storageClient(settings);
  const key = workspaceKeyPrefix(h.cfg.prefix, workspace) + rel;
  const fileName = basename(rel);
  let handedOff = false;
  try {
    if (h.cfg.serve === 'redirect') {
      if (!(await statObject(h, key))) return undefined;
      return { redirect: await presignGet(h, key, Math.min(REDIRECT_SECONDS, h.cfg.presignSeconds), fileName), fileName };
    }
    let obj;
    try {
      obj = await openObject(h, key);
    } catch (err) {
      if ((err as { code?: string }).code === 'OSM_ERR_STORAGE_NOT_FOUND') return undefined;
      throw err;
    }
    obj.stream.once('close', () => h.close());
    handedOff = true;
    return { stream: obj.stream, size: obj.size, fileName };
  } finally {
    if (!handedOff) h.close();
  }
}
