/**
 * After a run ends (`storage.enabled` and `storage.upload_outputs`): its artifacts — the rows of
 * the artifacts table, files or folders inside the workspace folder — are uploaded under
 * `<prefix>workspaces/<workspace>/<path relative to the folder>`, so the master (or anyone with
 * the bucket) can serve them when this machine's folder is gone. Unchanged files are skipped.
 *
 * Never throws and never changes the run: the outcome is one event of the run —
 * `storage.uploaded` (what was uploaded), or `storage.upload_failed` (a warning naming what
 * failed, its message scrubbed of keys and signatures).
 */
import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { messageOf } from '../errors.js';
import type { LoadedSettings } from '../settings/load.js';
import type { AsyncStore } from '../store/index.js';
import { isInside } from '../util/fs-safe.js';
import { scrubStorageText, storageClient, type StorageHandle } from './client.js';
import { resolveStorage, storageEnabled, type StorageConfig } from './config.js';
import { workspaceKeyPrefix } from './keys.js';
import { statObject, uploadFile } from './ops.js';
import { sameContent, syncUpload } from './sync.js';

export interface RunUploadResult {
  uploaded: string[];
  skipped: string[];
  /** Artifacts left out: outside the workspace folder, or gone. */
  ignored: string[];
  errors: { path: string; error: string }[];
}

/** True when finished runs should upload their artifacts. */
export function uploadsEnabled(settings: unknown): boolean {
  if (!storageEnabled(settings)) return false;
  try {
    return resolveStorage(settings).uploadOutputs;
  } catch {
    return false;
  }
}

async function uploadOne(h: StorageHandle, root: string, path: string, prefix: string, res: RunUploadResult): Promise<void> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    res.ignored.push(path);
    return;
  }
  if (!isInside(root, real) || real === root) {
    res.ignored.push(path);
    return;
  }
  const rel = relative(root, real).split(sep).join('/');
  const st = await lstat(real);
  if (st.isDirectory()) {
    const r = await syncUpload(h, real, prefix + rel);
    res.uploaded.push(...r.uploaded);
    res.skipped.push(...r.skipped);
    res.errors.push(...r.errors);
    return;
  }
  if (!st.isFile()) {
    res.ignored.push(path);
    return;
  }
  const key = prefix + rel;
  try {
    const obj = await statObject(h, key);
    if (obj && (await sameContent(real, obj))) {
      res.skipped.push(key);
      return;
    }
    await uploadFile(h, real, key);
    res.uploaded.push(key);
  } catch (err) {
    res.errors.push({ path: key, error: messageOf(err) });
  }
}

/** Uploads the artifacts of run `runId` (see the header); answers what happened, or undefined when uploads are off. */
export async function uploadRunArtifacts(app: { repos: AsyncStore; settings: () => LoadedSettings }, runId: number): Promise<RunUploadResult | undefined> {
  const loaded = app.settings();
  if (!uploadsEnabled(loaded.settings)) return undefined;
  const run = await app.repos.runs.get(runId);
  if (!run) return undefined;
  const res: RunUploadResult = { uploaded: [], skipped: [], ignored: [], errors: [] };
  let cfg: StorageConfig | undefined;
  try {
    cfg = resolveStorage(loaded.settings);
    const h = storageClient(loaded.settings);
    try {
      const artifacts = await app.repos.artifacts.listByRun(run.id);
      // Grouped by workspace: a run's artifacts normally all belong to its own (read once each).
      const localPaths = new Map<string, string>();
      for (const a of artifacts) {
        const workspace = a.workspace || run.workspace;
        let local = localPaths.get(workspace);
        if (local === undefined) {
          local = (await app.repos.workspaces.get(workspace))?.local_path ?? '';
          localPaths.set(workspace, local);
        }
        const folder = local && isAbsolute(local) ? local : join(resolve(loaded.paths.workspaces), workspace);
        let root: string;
        try {
          root = await realpath(folder);
        } catch {
          res.ignored.push(a.artifact_path);
          continue;
        }
        const path = isAbsolute(a.artifact_path) ? a.artifact_path : join(root, a.artifact_path);
        try {
          await uploadOne(h, root, path, workspaceKeyPrefix(h.cfg.prefix, workspace), res);
        } catch (err) {
          res.errors.push({ path: a.artifact_path, error: messageOf(err) });
        }
      }
    } finally {
      h.close();
    }
  } catch (err) {
    res.errors.push({ path: '', error: messageOf(err) });
  }
  const scrub = (s: string) => scrubStorageText(s, cfg);
  const errorsShown = res.errors.map((e) => ({ path: e.path, error: scrub(e.error) }));
  try {
    const failed = errorsShown.length > 0;
    await app.repos.events.insert({
      topic: failed ? 'storage.upload_failed' : 'storage.uploaded',
      name: failed ? 'storage.upload_failed' : 'storage.uploaded',
      source: 'storage',
      source_type: 'run',
      data_type: failed ? 'warning' : 'storage',
      data: { run_uuid: run.run_uuid, uploaded: res.uploaded.length, skipped: res.skipped.length, ignored: res.ignored.length, keys: res.uploaded.slice(0, 200), errors: errorsShown.slice(0, 50) },
      workspace: run.workspace,
      run_id: run.run_uuid,
      workflow_name: run.workflow_name,
      processed: true,
      ...(failed ? { error: errorsShown.map((e) => (e.path ? `${e.path}: ${e.error}` : e.error)).join('; ').slice(0, 2000) } : {}),
    });
  } catch {
    // The event is a record of the upload; a database hiccup must not reach the run.
  }
  return { ...res, errors: errorsShown };
}
