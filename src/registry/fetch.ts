/**
 * Bounded HTTP(S) downloads for the registry and installers: http/https only, an overall timeout,
 * a byte cap checked against Content-Length and again while streaming (servers lie), redirects
 * followed by hand (at most 3, each hop re-checked), and — unless `allowPrivate` — a connect-time
 * address check: the DNS answer is checked inside the socket's own lookup, so the address we
 * judged is the address we connect to (no DNS-rebinding window). A GitHub token is attached only
 * when the parsed hostname is exactly a GitHub host over https, never by substring.
 */
import { createWriteStream } from 'node:fs';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { isPrivateAddress } from '../util/outbound.js';

export interface FetchOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Redirects followed (default 3). */
  maxRedirects?: number;
  /** Allow loopback/link-local/private destinations (operator-supplied URLs, tests). */
  allowPrivate: boolean;
  /** Bearer token for exact GitHub hosts (default: $GITHUB_API_KEY or $GH_TOKEN). */
  githubToken?: string;
  /** The setting named in the refusal message (default server.allow_private_registry). */
  privateHint?: string;
}

/** `refused`: the URL or its address is not allowed (a client error); `failed`: the fetch did not work. */
export class FetchError extends Error {
  constructor(message: string, readonly kind: 'refused' | 'failed') {
    super(message);
  }
}

const GITHUB_HOSTS = new Set(['github.com', 'api.github.com', 'raw.githubusercontent.com', 'codeload.github.com']);

/** Parses `text` as an http(s) URL or throws a `refused` FetchError. */
export function checkHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FetchError('invalid URL', 'refused');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchError(`unsupported URL scheme ${url.protocol.replace(/:$/, '')} (use http or https)`, 'refused');
  return url;
}

/** The Authorization header for `url`, only for https and an exact GitHub hostname. */
export function githubAuthHeader(url: URL, token: string | undefined): string | undefined {
  if (!token || url.protocol !== 'https:' || url.username || url.password) return undefined;
  return GITHUB_HOSTS.has(url.hostname.toLowerCase()) ? `Bearer ${token}` : undefined;
}

/** The GitHub token from the environment, if any. */
export function envGithubToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.GITHUB_API_KEY || env.GH_TOKEN || undefined;
}

/** A socket lookup that refuses private answers (records what it refused for the error message). */
function guardedLookup(refused: { host?: string; ip?: string }): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad || list.length === 0) {
        refused.host = hostname;
        refused.ip = bad?.address ?? '';
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to a private address`);
        e.code = 'EOSMPRIVATE';
        return callback(e, '');
      }
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

function refusedPrivate(host: string, ip: string | undefined, hint = 'server.allow_private_registry'): FetchError {
  const shown = ip && ip !== host ? `${host} (${ip})` : host;
  return new FetchError(`${shown} is a loopback, link-local or private address; set ${hint}: true to allow it`, 'refused');
}

/** Follows redirects by hand and returns the final 200 response body. */
async function open(urlText: string, opts: FetchOptions, agent: Agent, refused: { host?: string; ip?: string }, signal: AbortSignal) {
  let url = checkHttpUrl(urlText);
  const token = opts.githubToken ?? envGithubToken();
  const maxRedirects = opts.maxRedirects ?? 3;
  for (let hop = 0; ; hop++) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!opts.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) throw refusedPrivate(host, undefined, opts.privateHint);
    const headers: Record<string, string> = { 'user-agent': 'osm-installer', accept: '*/*' };
    const auth = githubAuthHeader(url, token);
    if (auth) headers.authorization = auth;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, { method: 'GET', headers, dispatcher: agent, signal });
    } catch (err) {
      if (refused.host) throw refusedPrivate(refused.host, refused.ip, opts.privateHint);
      if (signal.aborted) throw new FetchError(`timed out after ${Math.round(opts.timeoutMs / 1000)}s`, 'failed');
      throw new FetchError(`request to ${url.host} failed: ${(err as Error).message}`, 'failed');
    }
    if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
      await res.body.dump().catch(() => undefined);
      if (hop >= maxRedirects) throw new FetchError(`too many redirects (more than ${maxRedirects})`, 'failed');
      const location = Array.isArray(res.headers.location) ? res.headers.location[0]! : res.headers.location;
      try {
        url = checkHttpUrl(new URL(location, url).toString());
      } catch (err) {
        throw new FetchError(`redirect refused: ${(err as Error).message}`, 'refused');
      }
      continue;
    }
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => undefined);
      throw new FetchError(`HTTP status ${res.statusCode}`, 'failed');
    }
    return { res, url };
  }
}

async function withResponse<T>(urlText: string, opts: FetchOptions, sink: (body: NodeJS.ReadableStream, cap: Transform) => Promise<T>): Promise<{ value: T; bytes: number; url: URL }> {
  const refused: { host?: string; ip?: string } = {};
  const agent = new Agent({
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connect: opts.allowPrivate ? { timeout: opts.timeoutMs } : { timeout: opts.timeoutMs, lookup: guardedLookup(refused) },
  });
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const { res, url } = await open(urlText, opts, agent, refused, signal);
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      await res.body.dump().catch(() => undefined);
      throw new FetchError(`response is larger than ${opts.maxBytes} bytes`, 'failed');
    }
    let bytes = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(bytes > opts.maxBytes ? new FetchError(`response is larger than ${opts.maxBytes} bytes`, 'failed') : null, chunk);
      },
    });
    try {
      const value = await sink(res.body, cap);
      return { value, bytes, url };
    } catch (err) {
      if (err instanceof FetchError) throw err;
      if (signal.aborted) throw new FetchError(`timed out after ${Math.round(opts.timeoutMs / 1000)}s`, 'failed');
      throw new FetchError(`download failed: ${(err as Error).message}`, 'failed');
    }
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/** Downloads `url` into the new file `dest` (created exclusively, 0600); returns bytes and final URL. */
export async function fetchToFile(url: string, dest: string, opts: FetchOptions): Promise<{ bytes: number; url: URL }> {
  const r = await withResponse(url, opts, (body, cap) => pipeline(body, cap, createWriteStream(dest, { flags: 'wx', mode: 0o600 })));
  return { bytes: r.bytes, url: r.url };
}

/** Downloads `url` into memory (for small documents such as the registry JSON). */
export async function fetchBuffer(url: string, opts: FetchOptions): Promise<Buffer> {
  const r = await withResponse(url, opts, async (body, cap) => {
    const chunks: Buffer[] = [];
    await pipeline(body, cap, new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    }));
    return Buffer.concat(chunks);
  });
  return r.value;
}
