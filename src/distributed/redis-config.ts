/**
 * Where Redis is: `--redis-url` (reference rules: `redis://` optional, default port 6379,
 * user/password from userinfo, DB index from the path; `rediss://` for TLS) or the `redis`
 * section of the settings. The password never appears in what is shown (`display`).
 */
import { Redis, type RedisOptions } from 'ioredis';
import { errors, messageOf } from '../errors.js';
import type { LoadedSettings } from '../settings/index.js';
import { DEFAULT_PREFIX, isValidPrefix } from './keys.js';

export interface RedisTarget {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls: boolean;
  /** Connect timeout in ms. */
  connectTimeoutMs: number;
  /** `redis://host:port/db` without credentials, for logs and errors. */
  display: string;
}

export interface DistributedConfig {
  redis: RedisTarget;
  /** Key prefix of the BullMQ queue and of osm's own keys. */
  prefix: string;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

function displayOf(t: Pick<RedisTarget, 'host' | 'port' | 'db' | 'tls'>): string {
  const host = t.host.includes(':') ? `[${t.host}]` : t.host;
  return `${t.tls ? 'rediss' : 'redis'}://${host}:${t.port}/${t.db}`;
}

/** Parses a Redis URL; throws `invalid Redis URL: …` naming what is wrong (never echoing a password). */
export function parseRedisUrl(text: string): RedisTarget {
  const raw = text.trim();
  if (!raw) throw errors.invalidRedisUrl('empty');
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `redis://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw errors.invalidRedisUrl('cannot parse it (expected redis://[user:password@]host[:port][/db])');
  }
  const scheme = url.protocol.replace(/:$/, '').toLowerCase();
  if (scheme !== 'redis' && scheme !== 'rediss') throw errors.invalidRedisUrl(`unsupported scheme ${scheme}:// (use redis:// or rediss://)`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw errors.invalidRedisUrl('host is missing');
  const port = url.port ? Number(url.port) : 6379;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw errors.invalidRedisUrl(`port must be 1-65535`);
  const path = url.pathname.replace(/^\/+|\/+$/g, '');
  const db = path === '' ? 0 : Number(path);
  if (!/^\d*$/.test(path) || !Number.isInteger(db) || db < 0 || db > 1_000_000) throw errors.invalidRedisUrl(`the path must be a database index, got /${path.slice(0, 20)}`);
  const tls = scheme === 'rediss';
  const target: RedisTarget = { host, port, db, tls, connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, display: displayOf({ host, port, db, tls }) };
  if (url.username) target.username = decodeURIComponent(url.username);
  if (url.password) target.password = decodeURIComponent(url.password);
  return target;
}

/** Redis from `--redis-url`, else from the settings; neither → `redis not configured …`. */
export function resolveRedisTarget(settings: LoadedSettings, redisUrl?: string): RedisTarget {
  if (redisUrl !== undefined && redisUrl.trim() !== '') return parseRedisUrl(redisUrl);
  const r = settings.settings.redis as { host?: string; port?: number; username?: string; password?: string; db?: number; connection_timeout?: number };
  const host = String(r.host ?? '').trim();
  if (!host) throw errors.redisNotConfigured();
  const port = Number(r.port ?? 6379);
  const db = Number(r.db ?? 0);
  const seconds = Number(r.connection_timeout ?? 0);
  const target: RedisTarget = {
    host,
    port,
    db,
    tls: false,
    connectTimeoutMs: seconds > 0 ? Math.min(seconds * 1000, 60_000) : DEFAULT_CONNECT_TIMEOUT_MS,
    display: displayOf({ host, port, db, tls: false }),
  };
  if (r.username) target.username = String(r.username);
  if (r.password) target.password = String(r.password);
  return target;
}

/**
 * The key prefix: explicit option, else `OSM_REDIS_PREFIX`, else `redis.prefix` from the
 * settings (kept only when the settings schema declares it), else `osm`.
 */
export function resolvePrefix(settings: LoadedSettings, explicit?: string): string {
  const fromSettings = (settings.settings.redis as { prefix?: unknown }).prefix;
  const chosen = [explicit, process.env.OSM_REDIS_PREFIX, typeof fromSettings === 'string' ? fromSettings : undefined].find((v) => v !== undefined && v.trim() !== '');
  const prefix = (chosen ?? DEFAULT_PREFIX).trim();
  if (!isValidPrefix(prefix)) throw errors.validation(`invalid Redis key prefix ${JSON.stringify(prefix)} (letters, digits, ".", "_" and "-" only, at most 64)`);
  return prefix;
}

/** Both of the above. */
export function resolveDistributedConfig(settings: LoadedSettings, opts: { redisUrl?: string; prefix?: string } = {}): DistributedConfig {
  return { redis: resolveRedisTarget(settings, opts.redisUrl), prefix: resolvePrefix(settings, opts.prefix) };
}

/**
 * ioredis options for BullMQ connections. `maxRetriesPerRequest: null` is what BullMQ workers
 * need (blocking commands must wait through reconnects).
 */
export function connectionOptions(t: RedisTarget): RedisOptions {
  return {
    host: t.host,
    port: t.port,
    db: t.db,
    ...(t.username ? { username: t.username } : {}),
    ...(t.password ? { password: t.password } : {}),
    ...(t.tls ? { tls: { servername: t.host } } : {}),
    connectTimeout: t.connectTimeoutMs,
    maxRetriesPerRequest: null,
  };
}

/**
 * Fails fast when Redis cannot be reached (BullMQ itself would retry forever): one connection,
 * no retries, a PING, then closed.
 */
export async function pingRedis(t: RedisTarget): Promise<void> {
  const client = new Redis({ ...connectionOptions(t), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw errors.redisUnavailable(t.display, messageOf(err));
  } finally {
    client.disconnect();
  }
}
