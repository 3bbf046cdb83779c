/**
 * The cdn_storage functions (reference server-api §10.2 "cdn_storage", docs "CDN/Storage
 * Functions"): object storage of the `storage` settings from workflow scripts.
 *
 * | function | answers (failure answer) |
 * |---|---|
 * | `cdn_upload(localPath, remoteKey)` | bool (false) |
 * | `cdn_download(remoteKey, localPath)` | bool (false) |
 * | `cdn_exists(remoteKey)` | bool (false) |
 * | `cdn_delete(remoteKey)` | bool: something was deleted (false); a key ending in `/`, or one that is no object, deletes that folder |
 * | `cdn_sync_upload(localDir, remotePrefix)` | `{success, uploaded, skipped, errors}` counts |
 * | `cdn_sync_download(remotePrefix, localDir)` | `{success, downloaded, skipped, errors}` counts |
 * | `cdn_get_presigned_url(remoteKey, expiryMins?)` | URL ("") — default lifetime storage.presign_expiry |
 * | `cdn_list(prefix?)` | `[{key, size, lastModified, etag}]` ([]) |
 * | `cdn_stat(remoteKey)` | `{key, size, lastModified, etag}` or null |
 * | `cdn_read(remoteKey)` | the content as text, up to 16 MiB ("") |
 * | `cdn_ls_tree(prefix?, depth?)` | a tree-formatted listing ("") |
 *
 * Like every function they never throw: a failure prints one `[WARN] <function>: <why>` line and
 * answers the failure value; with storage off the reason is "storage is not enabled: …".
 * Scripts are synchronous and the S3 client is not, so each call runs in a child process
 * (src/storage/child.ts). The messages shown were scrubbed of the keys and signatures.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, isMissing, runProgram, stateOf } from './helpers.js';
import { errors, messageOf } from '../../errors.js';
import { resolveStorage, storageSettingsOf } from '../../storage/config.js';
import type { ChildAnswer } from '../../storage/child.js';

/** The compiled child: next to this module's build, else the dist/ build (tests run the sources). */
function childFile(): string | undefined {
  for (const u of [new URL('../../storage/child.js', import.meta.url), new URL('../../../dist/storage/child.js', import.meta.url)]) {
    const p = fileURLToPath(u);
    if (existsSync(p)) return p;
  }
  return undefined;
}

function warn(ctx: FnContext, fn: string, why: string): void {
  stateOf(ctx).emit(`[WARN] ${fn}: ${why}`, 'yellow');
}

/** Transfers may be long: up to six hours, within the evaluation's own budget. */
const CALL_CAP_MS = 6 * 3600_000;

/** Runs one storage operation; undefined (after a warning) when it failed. */
function call(ctx: FnContext, fn: string, op: string, args: unknown[]): { value: unknown } | undefined {
  try {
    resolveStorage(ctx.settings);
  } catch (err) {
    warn(ctx, fn, messageOf(err));
    return undefined;
  }
  const file = childFile();
  if (!file) {
    warn(ctx, fn, 'the storage helper is not built (run npm run build)');
    return undefined;
  }
  const r = runProgram(ctx, process.execPath, [file], {
    // Only the storage section crosses to the child, on stdin.
    input: JSON.stringify({ op, args, settings: { storage: storageSettingsOf(ctx.settings) }, outbound: ctx.outbound, cwd: ctx.cwd }),
    stdio: ['pipe', 'pipe', 'pipe'],
    capMs: CALL_CAP_MS,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  let answer: ChildAnswer | undefined;
  try {
    answer = JSON.parse(r.stdout) as ChildAnswer;
  } catch {
    answer = undefined;
  }
  if (!answer) {
    warn(ctx, fn, r.error ? `the storage helper did not answer (${r.error})` : `the storage helper failed (exit ${r.status ?? 'signal'})`);
    return undefined;
  }
  if (!answer.ok) {
    warn(ctx, fn, answer.error);
    return undefined;
  }
  return { value: answer.value };
}

/** Two required string arguments, or a warning. */
function need(ctx: FnContext, fn: string, ...values: [string, unknown][]): string[] | undefined {
  const out: string[] = [];
  for (const [label, v] of values) {
    const s = argStr(v);
    if (s === null) {
      warn(ctx, fn, `${label} is required`);
      return undefined;
    }
    out.push(s);
  }
  return out;
}

interface SyncAnswer {
  uploaded: string[];
  downloaded: string[];
  skipped: string[];
  errors: { path: string; error: string }[];
}

function syncSummary(ctx: FnContext, fn: string, r: SyncAnswer | undefined, moved: 'uploaded' | 'downloaded') {
  if (!r) return { success: false, [moved]: 0, skipped: 0, errors: 0 };
  for (const e of r.errors.slice(0, 20)) warn(ctx, fn, `${e.path}: ${e.error}`);
  if (r.errors.length > 20) warn(ctx, fn, `… and ${r.errors.length - 20} more error(s)`);
  return { success: r.errors.length === 0, [moved]: r[moved].length, skipped: r.skipped.length, errors: r.errors.length };
}

/** The cdn_storage functions, by snake_case name (aliases come from the catalogue). */
export const cdnFunctions: Record<string, FnImpl> = {
  cdn_upload: (ctx, local, key) => {
    const a = need(ctx, 'cdn_upload', ['localPath', local], ['remoteKey', key]);
    return a ? call(ctx, 'cdn_upload', 'upload', a) !== undefined : false;
  },
  cdn_download: (ctx, key, local) => {
    const a = need(ctx, 'cdn_download', ['remoteKey', key], ['localPath', local]);
    return a ? call(ctx, 'cdn_download', 'download', a) !== undefined : false;
  },
  cdn_exists: (ctx, key) => {
    const a = need(ctx, 'cdn_exists', ['remoteKey', key]);
    return a ? call(ctx, 'cdn_exists', 'exists', a)?.value === true : false;
  },
  cdn_delete: (ctx, key) => {
    const a = need(ctx, 'cdn_delete', ['remoteKey', key]);
    if (!a) return false;
    const r = call(ctx, 'cdn_delete', 'delete', a)?.value as { deleted: string[]; errors: string[] } | undefined;
    if (!r) return false;
    if (r.errors.length > 0) warn(ctx, 'cdn_delete', `${r.errors.length} key(s) could not be deleted`);
    return r.deleted.length > 0 && r.errors.length === 0;
  },
  cdn_sync_upload: (ctx, dir, prefix) => {
    const a = need(ctx, 'cdn_sync_upload', ['localDir', dir]);
    if (!a) return syncSummary(ctx, 'cdn_sync_upload', undefined, 'uploaded');
    const r = call(ctx, 'cdn_sync_upload', 'sync_upload', [a[0], isMissing(prefix) ? '' : String(prefix)])?.value as SyncAnswer | undefined;
    return syncSummary(ctx, 'cdn_sync_upload', r, 'uploaded');
  },
  cdn_sync_download: (ctx, prefix, dir) => {
    const a = need(ctx, 'cdn_sync_download', ['localDir', dir]);
    if (!a) return syncSummary(ctx, 'cdn_sync_download', undefined, 'downloaded');
    const r = call(ctx, 'cdn_sync_download', 'sync_download', [isMissing(prefix) ? '' : String(prefix), a[0]])?.value as SyncAnswer | undefined;
    return syncSummary(ctx, 'cdn_sync_download', r, 'downloaded');
  },
  cdn_get_presigned_url: (ctx, key, minutes) => {
    const a = need(ctx, 'cdn_get_presigned_url', ['remoteKey', key]);
    if (!a) return '';
    const v = call(ctx, 'cdn_get_presigned_url', 'presign', [a[0], isMissing(minutes) ? undefined : Number(minutes)])?.value;
    return typeof v === 'string' ? v : '';
  },
  cdn_list: (ctx, prefix) => {
    const v = call(ctx, 'cdn_list', 'list', [isMissing(prefix) ? '' : String(prefix)])?.value;
    return Array.isArray(v) ? v : [];
  },
  cdn_stat: (ctx, key) => {
    const a = need(ctx, 'cdn_stat', ['remoteKey', key]);
    if (!a) return null;
    const v = call(ctx, 'cdn_stat', 'stat', a)?.value;
    return v && typeof v === 'object' ? v : null;
  },
  cdn_read: (ctx, key) => {
    const a = need(ctx, 'cdn_read', ['remoteKey', key]);
    if (!a) return '';
    const v = call(ctx, 'cdn_read', 'read', a)?.value;
    return typeof v === 'string' ? v : '';
  },
  cdn_ls_tree: (ctx, prefix, depth) => {
    const v = call(ctx, 'cdn_ls_tree', 'ls_tree', [isMissing(prefix) ? '' : String(prefix), isMissing(depth) ? 0 : Number(depth)])?.value;
    return typeof v === 'string' ? v : '';
  },
};

/** Exposed for tests: the message a call without storage prints. */
export const STORAGE_DISABLED_MESSAGE = errors.storageDisabled().message;
