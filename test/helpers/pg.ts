/**
 * A fresh PostgreSQL database per test, on the machine's server at 127.0.0.1:5432 (user
 * postgres, trust auth; OSM_TEST_PG_ADMIN_URL overrides). The database is created with a random
 * name and dropped (WITH FORCE) by `drop`. Locally an unreachable server skips the tests with a
 * visible message; under CI=true it fails them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.OSM_TEST_PG_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface PgDatabase {
  name: string;
  url: string;
  drop: () => Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 5000 });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** True when the admin URL answers; otherwise warns (or throws under CI=true) and returns false. */
export async function pgAvailable(what: string): Promise<boolean> {
  try {
    await admin((c) => c.query('SELECT 1'));
    return true;
  } catch (err) {
    const msg = `PostgreSQL at ${PG_ADMIN_URL.replace(/:[^:@/]*@/, ':***@')} is not reachable (${(err as Error).message})`;
    if (process.env.CI === 'true') throw new Error(`${msg}: required on CI for ${what}`);
    console.warn(`[${what}] ${msg}: skipping`);
    return false;
  }
}

/**
 * Creates a fresh database (empty, or a copy of `template`: a database nobody is connected to);
 * the caller drops it (afterAll / finally).
 */
export async function createPgDatabase(prefix = 'osm_test', template?: string): Promise<PgDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`));
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return {
    name,
    url: u.toString(),
    drop: () => admin(async (c) => {
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }),
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated template database made once per test run by test/global-setup.ts ('' when none). */
    pgTemplate: string;
  }
}

/**
 * A migrated template database for a whole test run: created by the global setup (which drops it
 * when the run ends) and handed to the test processes through vitest's provide/inject.
 */
export async function createPgTemplate(): Promise<PgDatabase> {
  const { openPgStore } = await import('../../src/store/pg/store.js');
  const db = await createPgDatabase('osm_tmpl');
  try {
    const store = await openPgStore(db.url, { max: 1 });
    await store.close();
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
  return db;
}

/**
 * A fresh database with osm's schema: a copy of the run's migrated template (copying is much
 * faster than migrating), or — outside a vitest run with the global setup — a new database
 * migrated on the spot. The caller drops it.
 */
export async function createMigratedPgDatabase(prefix = 'osm_test'): Promise<PgDatabase> {
  let template = '';
  try {
    // Loaded here, not at the top: the global setup imports this file outside the test runtime.
    const { inject } = await import('vitest');
    template = inject('pgTemplate') ?? '';
  } catch {
    // not inside a vitest worker
  }
  if (template) return createPgDatabase(prefix, template);
  const db = await createPgDatabase(prefix);
  const { openPgStore } = await import('../../src/store/pg/store.js');
  const store = await openPgStore(db.url, { max: 1 });
  await store.close();
  return db;
}

/** The engine the API tests run on: OSM_TEST_ENGINE=postgresql selects PostgreSQL (the api-pg project in vitest.config.ts). */
export const TEST_ENGINE: 'sqlite' | 'postgresql' = process.env.OSM_TEST_ENGINE === 'postgresql' ? 'postgresql' : 'sqlite';
