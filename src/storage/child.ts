/**
 * The storage child process of the cdn_* functions. Functions are synchronous (scripts call them
 * like the reference's goja functions) and the S3 client is not, so each call runs here: one JSON
 * request on stdin ({op, args, settings, outbound?}), one JSON answer on stdout
 * ({ok: true, value} | {ok: false, error}). Settings travel on stdin, never in argv or the
 * environment, so the secret key is not visible in the process list.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../errors.js';
import type { OutboundPolicy } from '../util/outbound.js';
import { scrubStorageText, storageClient, type StorageHandle } from './client.js';
import { resolveStorage } from './config.js';
import { checkPrefix, folderPrefix } from './keys.js';
import { deletePath, downloadFile, listObjects, objectExists, presignGet, readObject, statObject, uploadFile } from './ops.js';
import { syncDownload, syncUpload } from './sync.js';
import { renderTree } from './tree.js';

export interface ChildRequest {
  op: string;
  args: unknown[];
  settings: unknown;
  outbound?: OutboundPolicy;
  /** Working folder relative local paths are resolved against. */
  cwd?: string;
}

export type ChildAnswer = { ok: true; value: unknown } | { ok: false; error: string };

/** Largest object cdn_read returns as a string. */
export const READ_LIMIT = 16 * 1024 * 1024;

const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** Runs one operation against the configured storage. */
export async function runOp(req: ChildRequest): Promise<unknown> {
  const h: StorageHandle = storageClient(req.settings, { outbound: req.outbound });
  const local = (p: unknown) => resolve(req.cwd ?? process.cwd(), str(p));
  const [a, b] = req.args;
  try {
    switch (req.op) {
      case 'upload':
        return await uploadFile(h, local(a), str(b));
      case 'download': {
        const dest = local(b);
        await mkdir(dirname(dest), { recursive: true });
        return await downloadFile(h, str(a), dest);
      }
      case 'exists':
        return await objectExists(h, str(a));
      case 'delete':
        return await deletePath(h, str(a));
      case 'sync_upload':
        return await syncUpload(h, local(a), str(b));
      case 'sync_download':
        return await syncDownload(h, str(a), local(b));
      case 'presign': {
        const minutes = Number(b);
        return await presignGet(h, str(a), Number.isFinite(minutes) && minutes > 0 ? minutes * 60 : undefined);
      }
      case 'list':
        return await listObjects(h, checkPrefix(str(a)));
      case 'stat':
        return await statObject(h, str(a));
      case 'read':
        return (await readObject(h, str(a), READ_LIMIT)).toString('utf8');
      case 'ls_tree': {
        const prefix = str(a) === '' ? '' : folderPrefix(str(a));
        const depth = Number(b);
        return renderTree(await listObjects(h, prefix), prefix, Number.isFinite(depth) && depth > 0 ? Math.trunc(depth) : 0);
      }
      default:
        throw new Error(`unknown storage operation ${JSON.stringify(req.op)}`);
    }
  } finally {
    h.close();
  }
}

/** Runs `req` and answers without ever throwing; error text is scrubbed of the configured keys. */
export async function answer(req: ChildRequest): Promise<ChildAnswer> {
  try {
    return { ok: true, value: await runOp(req) };
  } catch (err) {
    let cfg;
    try {
      cfg = resolveStorage(req.settings);
    } catch {
      cfg = undefined;
    }
    return { ok: false, error: scrubStorageText(messageOf(err), cfg) };
  }
}

async function main(): Promise<void> {
  let input = '';
  process.stdin.setEncoding('utf8');
  for await (const c of process.stdin) input += c;
  let req: ChildRequest;
  try {
    req = JSON.parse(input) as ChildRequest;
  } catch {
    req = { op: '', args: [], settings: {} };
  }
  const out = req.op ? await answer(req) : { ok: false, error: 'bad request' };
  // Exit once the answer is flushed: idle keep-alive sockets must not hold the caller.
  process.stdout.write(JSON.stringify(out), () => process.exit(0));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) void main();
