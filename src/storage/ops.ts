/**
 * Object operations on one storage client: upload (multipart for big files, with progress),
 * download to a file (atomic: temporary file, then rename), stream, stat, exists, delete (one
 * key or a whole prefix), list, read and presign. Every failure is a catalogue error whose
 * message was scrubbed of credentials and signatures (client.ts storageFailure).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { errors } from '../errors.js';
import { isNotFound, storageFailure, type StorageHandle } from './client.js';
import { checkKey, checkPrefix } from './keys.js';

/** One object as listings and stat answer it (the reference's cdn_list/cdn_stat shape). */
export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: string;
  etag: string;
}

/** Called with bytes done and the total while a transfer runs. */
export type Progress = (done: number, total: number) => void;

/** Part size of multipart uploads: S3's minimum is 5 MiB; 8 MiB keeps 10,000 parts ≥ 78 GiB. */
const PART_SIZE = 8 * 1024 * 1024;

const etagOf = (e: string | undefined) => String(e ?? '').replace(/"/g, '');
const isoOf = (d: Date | undefined) => (d ? d.toISOString() : '');

/** Uploads a local regular file as `key` (multipart above one part); answers its size. */
export async function uploadFile(h: StorageHandle, file: string, key: string, onProgress?: Progress, contentType?: string): Promise<{ key: string; size: number }> {
  const k = checkKey(key);
  let size: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) throw errors.storageConfig(`not a regular file: ${file}`);
    size = st.size;
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') throw errors.notFound(`no such file: ${file}`);
    throw err;
  }
  try {
    const up = new Upload({
      client: h.s3,
      params: { Bucket: h.cfg.bucket, Key: k, Body: createReadStream(file), ContentLength: size, ...(contentType ? { ContentType: contentType } : {}) },
      partSize: PART_SIZE,
      queueSize: 2,
      leavePartsOnError: false,
    });
    if (onProgress) up.on('httpUploadProgress', (p) => onProgress(p.loaded ?? 0, size));
    await up.done();
  } catch (err) {
    throw storageFailure(err, h.cfg, `upload ${k}`);
  }
  return { key: k, size };
}

/** Metadata of one key, or null when it does not exist. */
export async function statObject(h: StorageHandle, key: string): Promise<ObjectInfo | null> {
  const k = checkKey(key);
  try {
    const r = await h.s3.send(new HeadObjectCommand({ Bucket: h.cfg.bucket, Key: k }));
    return { key: k, size: r.ContentLength ?? 0, lastModified: isoOf(r.LastModified), etag: etagOf(r.ETag) };
  } catch (err) {
    if (isNotFound(err)) return null;
    throw storageFailure(err, h.cfg, `stat ${k}`);
  }
}

/** True when `key` exists. */
export async function objectExists(h: StorageHandle, key: string): Promise<boolean> {
  return (await statObject(h, key)) !== null;
}

/** The object's body as a stream (with its size), or a storageNotFound error. */
export async function openObject(h: StorageHandle, key: string): Promise<{ stream: Readable; size: number; contentType: string }> {
  const k = checkKey(key);
  try {
    const r = await h.s3.send(new GetObjectCommand({ Bucket: h.cfg.bucket, Key: k }));
    return { stream: r.Body as Readable, size: r.ContentLength ?? 0, contentType: r.ContentType ?? '' };
  } catch (err) {
    if (isNotFound(err)) throw errors.storageNotFound(k);
    throw storageFailure(err, h.cfg, `download ${k}`);
  }
}

/**
 * Downloads `key` to `dest` through a temporary file beside it, renamed into place once complete:
 * a failed transfer leaves no partial file, and a link at `dest` is replaced, never followed.
 */
export async function downloadFile(h: StorageHandle, key: string, dest: string, onProgress?: Progress): Promise<{ key: string; size: number }> {
  const { stream, size } = await openObject(h, key);
  const tmp = join(dirname(dest), `.${basename(dest)}.${process.pid}.${randomBytes(4).toString('hex')}.part`);
  let done = 0;
  const counted = async function* (src: AsyncIterable<Buffer>) {
    for await (const c of src) {
      done += c.length;
      onProgress?.(done, size);
      yield c;
    }
  };
  try {
    await pipeline(stream, counted, createWriteStream(tmp, { flags: 'wx', mode: 0o644 }));
    await rename(tmp, dest);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    if ((err as { code?: string }).code === 'EISDIR') throw errors.storageConfig(`${dest} is a folder`);
    throw storageFailure(err, h.cfg, `download ${key}`);
  }
  return { key: checkKey(key), size };
}

/** Reads a whole object as bytes; refuses objects larger than `maxBytes`. */
export async function readObject(h: StorageHandle, key: string, maxBytes: number): Promise<Buffer> {
  const { stream, size } = await openObject(h, key);
  if (size > maxBytes) {
    stream.destroy();
    throw errors.storageConfig(`${key} is ${size} bytes; reading is limited to ${maxBytes} bytes (download it instead)`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const c of stream) {
      total += (c as Buffer).length;
      if (total > maxBytes) {
        stream.destroy();
        throw errors.storageConfig(`${key} is larger than ${maxBytes} bytes (download it instead)`);
      }
      chunks.push(c as Buffer);
    }
  } catch (err) {
    throw storageFailure(err, h.cfg, `read ${key}`);
  }
  return Buffer.concat(chunks);
}

/** Every object under `prefix` (all pages, up to `max`), in key order. */
export async function listObjects(h: StorageHandle, prefix: string | undefined, max = 100_000): Promise<ObjectInfo[]> {
  const p = checkPrefix(prefix);
  const out: ObjectInfo[] = [];
  let token: string | undefined;
  do {
    let r: ListObjectsV2CommandOutput;
    try {
      r = await h.s3.send(new ListObjectsV2Command({ Bucket: h.cfg.bucket, Prefix: p || undefined, ContinuationToken: token, MaxKeys: 1000 }));
    } catch (err) {
      throw storageFailure(err, h.cfg, `list ${p || '(bucket)'}`);
    }
    for (const o of r.Contents ?? []) {
      if (o.Key === undefined) continue;
      out.push({ key: o.Key, size: o.Size ?? 0, lastModified: isoOf(o.LastModified), etag: etagOf(o.ETag) });
      if (out.length >= max) return out;
    }
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

/** Deletes one key. */
export async function deleteObject(h: StorageHandle, key: string): Promise<void> {
  const k = checkKey(key);
  try {
    await h.s3.send(new DeleteObjectCommand({ Bucket: h.cfg.bucket, Key: k }));
  } catch (err) {
    throw storageFailure(err, h.cfg, `delete ${k}`);
  }
}

/**
 * cdn_delete's rule (the reference's): a key ending in `/`, or a key that is not an object,
 * deletes everything under `<key>/`. Answers the keys deleted and the keys that failed.
 */
export async function deletePath(h: StorageHandle, key: string): Promise<{ deleted: string[]; errors: string[] }> {
  const k = checkKey(key);
  if (!k.endsWith('/') && (await objectExists(h, k))) {
    await deleteObject(h, k);
    return { deleted: [k], errors: [] };
  }
  const prefix = k.endsWith('/') ? k : `${k}/`;
  const keys = (await listObjects(h, prefix)).map((o) => o.key);
  const deleted: string[] = [];
  const failed: string[] = [];
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    try {
      const r = await h.s3.send(new DeleteObjectsCommand({ Bucket: h.cfg.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: false } }));
      const bad = new Set((r.Errors ?? []).map((e) => e.Key ?? ''));
      for (const key of batch) (bad.has(key) ? failed : deleted).push(key);
    } catch {
      // Some S3-compatible stores lack the batch call: one by one.
      for (const key of batch) {
        try {
          await deleteObject(h, key);
          deleted.push(key);
        } catch {
          failed.push(key);
        }
      }
    }
  }
  return { deleted, errors: failed };
}

/** A presigned GET URL for `key`, valid `seconds` (default storage.presign_expiry; S3's limit is 7 days). */
export async function presignGet(h: StorageHandle, key: string, seconds?: number, fileName?: string): Promise<string> {
  const k = checkKey(key);
  const expiresIn = Math.min(7 * 24 * 3600, Math.max(1, Math.round(seconds ?? h.cfg.presignSeconds)));
  try {
    const cmd = new GetObjectCommand({
      Bucket: h.cfg.bucket,
      Key: k,
      // The file is served as a download, never rendered as a page of the storage origin.
      ...(fileName ? { ResponseContentDisposition: `attachment; filename="${fileName.replace(/["\\\r\n]/g, '_')}"` } : {}),
    });
    return await getSignedUrl(h.s3, cmd, { expiresIn });
  } catch (err) {
    throw storageFailure(err, h.cfg, `presign ${k}`);
  }
}
