/**
 * Fetches a snapshot from an http(s) URL into a file: 60 s overall timeout, at most 3 redirects,
 * a size cap checked against Content-Length and again while streaming (a server may lie), and the
 * private-address guard for URLs an API caller supplies.
 */
import { errors, messageOf } from '../errors.js';
import { FetchError, fetchToFile } from '../registry/fetch.js';

export interface DownloadOptions {
  maxBytes: number;
  timeoutMs?: number;
  maxRedirects?: number;
  /** Allow loopback/link-local/private destinations (CLI, or server.allow_private_snapshot_urls). */
  allowPrivate: boolean;
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

/**
 * Downloads `url` to `dest`; returns the number of bytes written. Unless `allowPrivate`, the URL
 * (and every redirect hop, and the address DNS gives at connect time) may not be loopback,
 * link-local or private: a caller of the API must not make the daemon fetch from the inside of its
 * network (SSRF). The transfer itself is the registry's bounded fetch (src/registry/fetch.ts).
 */
export async function downloadSnapshot(urlText: string, dest: string, opts: DownloadOptions): Promise<number> {
  checkSnapshotUrl(urlText);
  try {
    const r = await fetchToFile(urlText, dest, {
      maxBytes: opts.maxBytes,
      timeoutMs: opts.timeoutMs ?? 60_000,
      maxRedirects: opts.maxRedirects ?? 3,
      allowPrivate: opts.allowPrivate,
      privateHint: 'server.allow_private_snapshot_urls',
      githubToken: '',
    });
    return r.bytes;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    if (err.kind === 'refused') throw errors.snapshotRejected(err.message);
    if (/^response is larger than/.test(err.message)) throw errors.snapshotRejected(`snapshot is larger than ${opts.maxBytes} bytes`);
    const status = /^HTTP status (\d+)$/.exec(err.message);
    if (status) throw errors.snapshotImport(`download failed with status: ${status[1]}`);
    throw errors.snapshotImport(`failed to download: ${messageOf(err)}`);
  }
}
