/**
 * Which database the settings name, and how to reach PostgreSQL: `database.db_engine`
 * (sqlite | postgresql), the connection fields or `database.url`, and `OSM_DATABASE_URL`, which
 * overrides both (and selects PostgreSQL). Everything shown to a user goes through `display`,
 * whose URL has its password masked.
 */
import type { PoolConfig } from 'pg';
import { errors } from '../../errors.js';
import { maskUrlPassword } from '../../settings/redact.js';
import { isPostgresUrl } from '../../settings/schema.js';

export type DbEngine = 'sqlite' | 'postgresql';

/** The `database` section as the schema gives it (only the fields used here). */
export interface DatabaseSettings {
  db_engine: string;
  db_path?: string;
  host: string;
  port: number;
  username: string;
  password: string;
  db_name: string;
  ssl_mode: string;
  url?: string;
  connection_timeout?: number;
}

export interface PgTarget {
  /** The full connection string (holds the password: never print it). */
  url: string;
  /** The same URL with its password masked. */
  display: string;
  host: string;
  port: number;
  database: string;
  user: string;
}

/** `sqlite` or `postgresql` (`postgres` is accepted as an alias); OSM_DATABASE_URL selects PostgreSQL. */
export function dbEngineOf(db: DatabaseSettings, env: NodeJS.ProcessEnv = process.env): DbEngine {
  if (env.OSM_DATABASE_URL?.trim()) return 'postgresql';
  return db.db_engine === 'postgresql' || db.db_engine === 'postgres' ? 'postgresql' : 'sqlite';
}

/** The PostgreSQL target of the settings: OSM_DATABASE_URL, else database.url, else the fields. */
export function pgTargetFromSettings(db: DatabaseSettings, env: NodeJS.ProcessEnv = process.env): PgTarget {
  const fromEnv = env.OSM_DATABASE_URL?.trim();
  if (fromEnv) return pgTarget(fromEnv, 'OSM_DATABASE_URL');
  if (db.url?.trim()) return pgTarget(db.url.trim(), 'database.url');
  const auth = db.username ? `${encodeURIComponent(db.username)}${db.password ? `:${encodeURIComponent(db.password)}` : ''}@` : '';
  const host = db.host.includes(':') && !db.host.startsWith('[') ? `[${db.host}]` : db.host;
  const ssl = db.ssl_mode && db.ssl_mode !== 'disable' ? `?sslmode=${encodeURIComponent(db.ssl_mode)}` : '';
  return pgTarget(`postgresql://${auth}${host}:${db.port}/${encodeURIComponent(db.db_name)}${ssl}`, 'database');
}

/** Parses a postgres URL given on the command line or in settings (`where` names its origin in errors). */
export function pgTarget(url: string, where = 'URL'): PgTarget {
  if (!isPostgresUrl(url)) throw errors.validation(`${where}: not a postgres:// or postgresql:// URL with a host (${maskUrlPassword(url)})`);
  const u = new URL(url);
  return {
    url,
    display: maskUrlPassword(url),
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: Number(u.port || 5432),
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres',
    user: decodeURIComponent(u.username),
  };
}

/** `host:port` of a target, as errors name it. */
export function hostPort(t: PgTarget): string {
  return `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
}

/** pg Pool options for a target. */
export function poolConfig(t: PgTarget, opts: { max?: number; connectTimeoutMs?: number } = {}): PoolConfig {
  return {
    connectionString: t.url,
    max: opts.max ?? 4,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    application_name: 'osm',
  };
}
