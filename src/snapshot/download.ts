/**
 * Fetches a snapshot from an http(s) URL into a file: 60 s overall timeout, at most 3 redirects,
 * and a size cap checked against Content-Length and again while streaming (a server may lie).
 */
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Agent, interceptors, request } from 'undici';
import { errors, messageOf } from '../errors.js';

export interface DownloadOptions {
  maxBytes: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

/** The URL as a parsed http(s) URL, or a 400. */
export function checkSnapshotUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw errors.snapshotRejected(`invalid url: ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw errors.snapshotRejected('url must use http or https');
  return url;
}

/** Downloads `url` to `dest`; returns the number of bytes written. */
export async function downloadSnapshot(urlText: string, dest: string, opts: DownloadOptions): Promise<number> {
  const url = checkSnapshotUrl(urlText);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const dispatcher = agent.compose(interceptors.redirect({ maxRedirections: opts.maxRedirects ?? 3 }));
  try {
    const res = await request(url, { method: 'GET', dispatcher, signal: AbortSignal.timeout(timeoutMs) }).catch((err: unknown) => {
      throw errors.snapshotImport(`failed to download: ${messageOf(err)}`);
    });
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => undefined);
      throw errors.snapshotImport(`download failed with status: ${res.statusCode}`);
    }
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      await res.body.dump().catch(() => undefined);
      throw errors.snapshotRejected(`snapshot is larger than ${opts.maxBytes} bytes`);
    }
    let bytes = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(bytes > opts.maxBytes ? errors.snapshotRejected(`snapshot is larger than ${opts.maxBytes} bytes`) : null, chunk);
      },
    });
    try {
      await pipeline(res.body, cap, createWriteStream(dest, { flags: 'wx', mode: 0o600 }));
    } catch (err) {
      if (err instanceof Error && 'status' in err) throw err;
      throw errors.snapshotImport(`failed to download: ${messageOf(err)}`);
    }
    return bytes;
  } finally {
    await agent.close().catch(() => undefined);
  }
}
