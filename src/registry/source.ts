/**
 * Where the binary registry comes from (server-api §8.1): a caller's `registry_url` (an http(s)
 * URL — 30 s, 32 MiB, ≤ 3 redirects — or a local file path), else the copy bundled with osm. There
 * is deliberately no network fallback. Only the bundled copy is trusted: a caller-supplied
 * registry is data, its commands are never executed unless the operator says so explicitly.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errors } from '../errors.js';
import bundled from './registry-metadata.json' with { type: 'json' };
import { checkHttpUrl, fetchBuffer, FetchError } from './fetch.js';
import { parseRegistryText, parseRegistryValue, RegistryParseError, type Registry } from './schema.js';

export const REGISTRY_MAX_BYTES = 32 * 1024 * 1024;
export const REGISTRY_TIMEOUT_MS = 30_000;

export interface LoadedRegistry {
  registry: Registry;
  /** The caller's value, or the bundled file's path. */
  url: string;
  source: 'bundled' | 'url' | 'file';
  /** True for the bundled registry, or a caller's registry the operator explicitly trusted. */
  trusted: boolean;
}

export interface RegistrySourceOptions {
  /** `registry_url`: http(s) URL or local file path; empty means the bundled registry. */
  url?: string;
  /** Private/loopback addresses and local files allowed (CLI, or server.allow_private_registry). */
  allowPrivate: boolean;
  /** Treat a caller-supplied registry as trusted (CLI `--trust-registry` only; never from the API). */
  trustCustom?: boolean;
}

/** Absolute path of the registry bundled with osm. */
export function bundledRegistryPath(): string {
  return fileURLToPath(new URL('./registry-metadata.json', import.meta.url));
}

/** The bundled (trusted) registry. */
export function loadBundledRegistry(): LoadedRegistry {
  try {
    return { registry: parseRegistryValue(bundled), url: bundledRegistryPath(), source: 'bundled', trusted: true };
  } catch (err) {
    // A broken bundled file is a packaging bug, but the message still says what is wrong.
    throw errors.registryLoad((err as Error).message);
  }
}

const looksLikeUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s);

/** Loads the registry a request or command asked for; 400 when refused, 500 when it cannot be loaded. */
export async function loadRegistry(opts: RegistrySourceOptions): Promise<LoadedRegistry> {
  const wanted = (opts.url ?? '').trim();
  if (wanted === '') return loadBundledRegistry();
  const trusted = Boolean(opts.trustCustom);
  if (looksLikeUrl(wanted)) {
    let text: string;
    try {
      checkHttpUrl(wanted);
      const buf = await fetchBuffer(wanted, { maxBytes: REGISTRY_MAX_BYTES, timeoutMs: REGISTRY_TIMEOUT_MS, allowPrivate: opts.allowPrivate });
      text = buf.toString('utf8');
    } catch (err) {
      if (err instanceof FetchError && err.kind === 'refused') throw errors.registryRefused(err.message);
      throw errors.registryLoad((err as Error).message);
    }
    return { registry: parseOrThrow(text), url: wanted, source: 'url', trusted };
  }
  if (!opts.allowPrivate) {
    throw errors.registryRefused('a local registry file is only allowed when server.allow_private_registry is true');
  }
  const file = resolve(wanted);
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > REGISTRY_MAX_BYTES) throw new Error(`file is larger than ${REGISTRY_MAX_BYTES} bytes`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw errors.registryLoad(`cannot read registry file: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  return { registry: parseOrThrow(text), url: wanted, source: 'file', trusted };
}

function parseOrThrow(text: string): Registry {
  try {
    return parseRegistryText(text);
  } catch (err) {
    if (err instanceof RegistryParseError) throw errors.registryLoad(err.message);
    throw err;
  }
}
