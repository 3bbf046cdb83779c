/**
 * Hostile-input fuzzing of every route, in process (`server.inject`): random and malformed path
 * parameters, query strings and bodies (invalid JSON, wrong types, deep nesting, huge arrays, wrong
 * content types, broken multipart). For every request: never a 500 (except the documented upstream
 * failures listed below, which must still carry their own message), every error is exactly the
 * `{ error: true, message }` envelope, and a rejected request to a write route changes nothing
 * stored (database checksum and the base folder's files). GET requests never change anything.
 *
 * Requests whose input would be valid for a route that executes something (POST /runs, functions,
 * events/emit, run start/resume, schedule trigger) are never sent: those routes are fuzzed with
 * invalid input only. The seed is random; set FUZZ_SEED to replay a failure that fast-check printed.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import fc from 'fast-check';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { routesOf, type RouteSpec } from '../../src/server/route.js';
import { accessOf } from '../../src/server/access.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined;

/**
 * Routes that document a 500 for a specific upstream failure, and the messages they may use.
 * A 500 anywhere else, or with the generic "Internal server error", is a bug.
 */
const NO_PROVIDER = /^No LLM providers configured$/;
const DOCUMENTED_500: Record<string, RegExp> = {
  'POST /osm/api/llm/v1/chat/completions': NO_PROVIDER,
  'POST /osm/api/llm/chat/completions': NO_PROVIDER,
  'POST /osm/api/llm/v1/embeddings': NO_PROVIDER,
  'POST /osm/api/llm/embeddings': NO_PROVIDER,
  'POST /osm/api/settings/reload': /^Failed to reload configuration: /,
  'POST /osm/api/snapshots/import': /^Failed to import snapshot: /,
};

/** Error bodies with documented keys besides error and message (the reference's valid_tables). */
const DOCUMENTED_EXTRA_KEYS: Record<string, string[]> = {
  'POST /osm/api/database/tables/:table/clear': ['valid_tables'],
};

type AnyRoute = RouteSpec<any, any, any>;
const keyOf = (r: AnyRoute) => `${r.method} ${r.url}`;

interface FuzzRequest {
  method: AnyRoute['method'];
  url: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** The parsed body when the payload is JSON of an object (to recognise valid input). */
  json?: unknown;
}

// ---- arbitraries ------------------------------------------------------------------------------

const HOSTILE = [
  '..', '../..', '../../etc/passwd', '..%2f..%2fetc%2fpasswd', '%2e%2e', '%2e%2e%2f', '%252e%252e%252f', '/etc/passwd', '\\..\\..\\windows',
  'a\u0000b', '\u0000', '%00', '%', '%zz', '%E0%A4%A', ' ', '', '-1', '0', '1e309', 'NaN', 'Infinity', '9007199254740993', '0x10',
  '__proto__', 'constructor', 'prototype', 'null', 'undefined', 'true', '[]', '{}', "'; DROP TABLE runs; --", '$(id)', '`id`', '{{Target}}',
  '\u202e\u0301', '😀'.repeat(50), 'a'.repeat(5000), '名前', '\r\nX-Injected: 1',
  '99999999999d', '9999999999999999999s', '+275760-09-13T00:00:00.001Z', '99999-12-31', '2026-13-45',
];

const anyText = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer().map(String),
  fc.nat({ max: 50 }).map(String),
);

/** A path segment: URL-encoded, or raw when it is one of the interesting raw forms. */
const pathSegment = fc.oneof(
  anyText.map((s) => encodeURIComponent(s)),
  fc.constantFrom('..', '%2e%2e', '..%2f..%2f', '%2e%2e%2fetc', '%00', '%', '%zz', '%c0%af', '.%2e', '%5c..%5c', '~', '*', 'a;b', 'a%3Fb'),
);

const anyJsonValue = fc.jsonValue({ maxDepth: 3 });
const scalarOrJunk = fc.oneof(anyText, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(anyText, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), anyText, { maxKeys: 3 }));

/** Keys a zod object schema knows about (top level), so shaped bodies reach the handlers. */
function keysOf(schema: z.ZodType | undefined): string[] {
  const s = schema as unknown as { shape?: Record<string, unknown>; _zod?: { def?: { shape?: Record<string, unknown>; in?: unknown; innerType?: unknown } } } | undefined;
  const shape = s?.shape ?? s?._zod?.def?.shape;
  if (shape && typeof shape === 'object') return Object.keys(shape);
  const inner = (s?._zod?.def?.in ?? s?._zod?.def?.innerType) as z.ZodType | undefined;
  return inner && inner !== schema ? keysOf(inner) : [];
}

const COMMON_KEYS = ['workspace', 'name', 'target', 'targets', 'module', 'flow', 'target_file', 'script', 'params', 'id', 'limit', 'offset', 'severity', 'url', 'source'];

function queryArb(route: AnyRoute): fc.Arbitrary<Record<string, unknown>> {
  const keys = [...new Set([...keysOf(route.query), 'limit', 'offset', 'search', 'json'])];
  return fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 8 })), fc.oneof(anyText, fc.array(anyText, { maxLength: 3 })), { maxKeys: 5 });
}

function rawQuery(q: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) for (const one of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(one))}`);
  return parts.join('&');
}

/** A multipart/form-data body with random fields and file. */
const multipartArb = fc
  .record({
    fields: fc.dictionary(fc.oneof(fc.constantFrom('force', 'url', 'source', 'skip_db', 'file'), fc.string({ maxLength: 6 })), anyText, { maxKeys: 3 }),
    file: fc.option(fc.record({ field: fc.constantFrom('file', 'other', ''), name: anyText, content: fc.oneof(anyText, fc.constant('kind: module\nname: x\nsteps: []\n'), fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a).toString('latin1'))) })),
    broken: fc.constantFrom('none', 'no-end', 'bad-boundary', 'garbage'),
  })
  .map(({ fields, file, broken }) => {
    const b = 'fuzzB0undary';
    const clean = (s: string) => s.replace(/[\r\n"]/g, '_');
    let body = '';
    for (const [k, v] of Object.entries(fields)) body += `--${b}\r\nContent-Disposition: form-data; name="${clean(k)}"\r\n\r\n${v}\r\n`;
    if (file) body += `--${b}\r\nContent-Disposition: form-data; name="${clean(file.field)}"; filename="${clean(file.name)}"\r\nContent-Type: application/octet-stream\r\n\r\n${file.content}\r\n`;
    if (broken !== 'no-end') body += `--${b}--\r\n`;
    if (broken === 'garbage') body = `\u0000\u0001garbage--${b}\r\n${body.slice(0, body.length / 2)}`;
    return { payload: Buffer.from(body, 'latin1'), type: `multipart/form-data; boundary=${broken === 'bad-boundary' ? 'other' : b}` };
  });

function bodyArb(route: AnyRoute): fc.Arbitrary<{ payload?: string | Buffer; type?: string; json?: unknown }> {
  const keys = [...new Set([...keysOf(route.body), ...COMMON_KEYS])];
  const shaped = fc.dictionary(fc.constantFrom(...keys), fc.oneof(scalarOrJunk, anyJsonValue), { maxKeys: 6 });
  const asJson = (v: unknown) => ({ payload: JSON.stringify(v), type: 'application/json', json: v });
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 4, arbitrary: shaped.map(asJson) },
    { weight: 2, arbitrary: anyJsonValue.map(asJson) },
    { weight: 2, arbitrary: fc.constantFrom('{', '{"a":', '[1,]', 'nul', '{"a":1}}', "{'a':1}", '\u0000', '', ' ', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}').map((p) => ({ payload: p, type: 'application/json' })) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => ({ payload: `${'['.repeat(n)}${']'.repeat(n)}`, type: 'application/json' })) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => ({ payload: `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`, type: 'application/json' })) },
    { weight: 1, arbitrary: fc.constantFrom(...keys).map((k) => ({ payload: JSON.stringify({ [k]: Array.from({ length: 50_000 }, (_, i) => `x${i}.example.com`) }), type: 'application/json' })) },
    { weight: 1, arbitrary: fc.tuple(anyText, fc.constantFrom('text/plain', 'application/yaml', 'application/x-www-form-urlencoded', 'application/xml', 'image/png', 'application/json; charset=utf-16', 'multipart/form-data', 'text/html; charset=bogus')).map(([p, type]) => ({ payload: p, type })) },
    { weight: 2, arbitrary: multipartArb },
  );
}

function requestArb(route: AnyRoute): fc.Arbitrary<FuzzRequest> {
  const names = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
  const paramsArb = fc.record(Object.fromEntries(names.map((n) => [n, pathSegment])) as Record<string, fc.Arbitrary<string>>);
  const hasBody = route.method !== 'GET';
  return fc.record({ params: paramsArb, query: queryArb(route), body: hasBody ? bodyArb(route) : fc.constant({}), rawQ: fc.option(fc.constantFrom('%', 'a=%zz', '&&&=', 'a[b]=1', '__proto__[x]=1', 'limit=1&limit=2', `x=${'y'.repeat(3000)}`)) }).map(({ params, query, body, rawQ }): FuzzRequest => {
    let url = route.url;
    for (const n of names) url = url.replace(`:${n}`, params[n]!);
    const qs = [rawQuery(query), rawQ ?? ''].filter(Boolean).join('&');
    const b = body as { payload?: string | Buffer; type?: string; json?: unknown };
    return {
      method: route.method,
      url: qs ? `${url}?${qs}` : url,
      params,
      query,
      headers: b.type ? { 'content-type': b.type } : ({} as Record<string, string>),
      payload: b.payload,
      json: b.json,
    };
  });
}

/**
 * True when the request carries a body the route would accept: for an executing route that is
 * what would run something for real (a workflow, a script, an event). Executing routes without a
 * body act on an existing run or schedule by id, and the fuzzed database has none to act on.
 */
function wouldValidate(route: AnyRoute, req: FuzzRequest): boolean {
  if (!route.body || (route.bodyKind ?? 'json') !== 'json') return false;
  return req.json !== undefined && route.body.safeParse(req.json).success;
}

// ---- state checks -------------------------------------------------------------------------------

/** Per store: one checksum query per table (row count, max rowid, max updated_at), built once. */
const checksumQueries = new WeakMap<SqliteTestServer, { name: string; stmt: { get(): unknown } }[]>();

/** Row count, max rowid and max(updated_at) of every table: changes when anything is written. */
function dbChecksum(t: SqliteTestServer): string {
  let queries = checksumQueries.get(t);
  if (!queries) {
    const db = t.app.store.db;
    // The audit log records every state-changing request, rejected ones included: that is its job.
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'audit_log' ORDER BY name").all() as { name: string; sql: string }[];
    queries = tables.map(({ name, sql }) => {
      const cols = (db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[]).map((c) => c.name);
      const upd = cols.includes('updated_at') ? ', max(updated_at) AS u' : '';
      // WITHOUT ROWID tables have no rowid: their row count and updated_at must do.
      const rowid = /WITHOUT\s+ROWID/i.test(sql) ? '' : ', max(rowid) AS r';
      return { name, stmt: db.prepare(`SELECT count(*) AS n${rowid}${upd} FROM "${name}"`) };
    });
    checksumQueries.set(t, queries);
  }
  return queries
    .map(({ name, stmt }) => {
      const row = stmt.get() as Record<string, unknown>;
      return `${name}:${row.n}:${row.r ?? ''}:${row.u ?? ''}`;
    })
    .join('|');
}

/** Every file of the base folder (database files excluded) with its size and mtime. */
function filesChecksum(base: string): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (/\.sqlite(-wal|-shm|-journal)?$/.test(e.name)) continue;
      if (e.isDirectory()) walk(p);
      else {
        const st = fs.lstatSync(p);
        out.push(`${path.relative(base, p)}:${st.size}:${st.mtimeMs}`);
      }
    }
  };
  walk(base);
  return out.sort().join('\n');
}

// ---- the property --------------------------------------------------------------------------------

async function checkRoute(t: SqliteTestServer, route: AnyRoute, auth: Record<string, string>, numRuns: number): Promise<void> {
  const executes = route.sideEffects === 'executes';
  const allowed500 = DOCUMENTED_500[keyOf(route)];
  await fc.assert(
    fc.asyncProperty(requestArb(route), async (req) => {
      // Valid input to an executing route would really run something: never sent.
      fc.pre(!(executes && wouldValidate(route, req)));
      const dbBefore = dbChecksum(t);
      const filesBefore = filesChecksum(t.base);
      const res = await t.server.inject({ method: req.method, url: req.url, headers: { ...req.headers, ...auth }, payload: req.payload });
      const where = `${req.method} ${req.url.slice(0, 300)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
      if (res.statusCode >= 500) {
        expect(allowed500, `unexpected 5xx: ${where}`).toBeDefined();
        expect(res.json().message, where).toMatch(allowed500!);
      }
      if (res.statusCode >= 400) {
        expect(res.headers['content-type'], where).toMatch(/application\/json/);
        const body = res.json();
        const extra = DOCUMENTED_EXTRA_KEYS[keyOf(route)] ?? [];
        expect(Object.keys(body).filter((k) => !extra.includes(k)).sort(), where).toEqual(['error', 'message']);
        expect(body.error, where).toBe(true);
        expect(typeof body.message === 'string' && body.message.trim().length > 0, where).toBe(true);
      }
      // GET never writes; a rejected request to a write route leaves everything as it was.
      if (req.method === 'GET' || res.statusCode >= 400) {
        expect(dbChecksum(t), `database changed: ${where}`).toBe(dbBefore);
        expect(filesChecksum(t.base), `files changed: ${where}`).toBe(filesBefore);
      }
    }),
    { numRuns, seed: SEED, endOnFailure: true, verbose: 1 },
  );
}

let authed: SqliteTestServer;
let open: SqliteTestServer;

beforeAll(async () => {
  authed = await makeSqliteTestServer();
  open = await makeSqliteTestServer({ noAuth: true });
  // The workflow index is built lazily on first use: build it now so GETs start from a steady state.
  for (const t of [authed, open]) await t.server.inject({ method: 'GET', url: '/osm/api/workflows', headers: t.auth });
});

afterAll(async () => {
  await authed?.close();
  await open?.close();
});

describe('route inventory', () => {
  it('every GET route declares sideEffects none; every route is fuzzed', () => {
    const routes = routesOf(authed.server);
    expect(routes.length).toBeGreaterThan(40);
    // The one documented exception: the reference's GET trigger of a webhook run template.
    const getWithEffects = new Set(['GET /osm/api/webhook-runs/:uuid/trigger']);
    for (const r of routes) if (r.method === 'GET' && !getWithEffects.has(keyOf(r))) expect(r.sideEffects, keyOf(r)).toBe('none');
    // The documented-500 list names real routes (a renamed route must not silently widen it).
    const keys = new Set(routes.map(keyOf));
    for (const k of Object.keys(DOCUMENTED_500)) expect(keys.has(k), k).toBe(true);
  });
});

describe('regressions found by fuzzing', () => {
  it('malformed percent-encoding in the path gets the envelope, not fastify\'s own body', async () => {
    for (const url of ['/osm/api/workflows/%', '/osm/api/runs/%zz', '/osm/api/workspaces/%E0%A4%A']) {
      const res = await authed.server.inject({ method: 'GET', url, headers: authed.auth });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'Malformed URL: invalid percent-encoding in the path' });
    }
  });

  it('an over-long path parameter is a 414 with the envelope; long but reasonable ones are routed', async () => {
    const res = await authed.server.inject({ method: 'GET', url: `/osm/api/runs/${'9'.repeat(1001)}`, headers: authed.auth });
    expect(res.statusCode).toBe(414);
    expect(res.json()).toEqual({ error: true, message: 'URI Too Long: a path parameter is longer than 1000 characters' });
    const ok = await authed.server.inject({ method: 'GET', url: `/osm/api/workspaces/${'w'.repeat(200)}`, headers: authed.auth });
    expect(ok.statusCode).toBe(404);
    expect(ok.json().message).toMatch(/not found/i);
  });

  it('a multipart body cut short is a 400 and leaves no partial upload behind', async () => {
    const uploads = authed.app.settings().paths.uploads;
    const listing = () => (fs.existsSync(uploads) ? fs.readdirSync(uploads).sort() : []);
    const before = listing();
    const b = 'cutB0undary';
    for (const payload of [
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhalf a fi`,
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nxx\r\n--${b}\r\nContent-Disposition: form-data; name="x"\r\n\r\ny`,
    ]) {
      for (const url of ['/osm/api/upload-file', '/osm/api/workflow-upload', '/osm/api/snapshots/import']) {
        const res = await authed.server.inject({ method: 'POST', url, headers: { ...authed.auth, 'content-type': `multipart/form-data; boundary=${b}` }, payload });
        expect(res.statusCode, url).toBe(400);
        expect(res.json(), url).toEqual({ error: true, message: 'Malformed multipart body: Unexpected end of multipart data' });
      }
    }
    expect(listing()).toEqual(before);
  });
});

describe('fuzz every route (API key)', () => {
  it('never 500, always the envelope, rejected writes change nothing', async () => {
    for (const route of routesOf(authed.server)) await checkRoute(authed, route, authed.auth, RUNS);
    const health = await authed.server.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
  }, 120_000);
});

describe('fuzz every route (--no-auth)', () => {
  it('never 500, always the envelope, rejected writes change nothing', async () => {
    for (const route of routesOf(open.server)) await checkRoute(open, route, {}, Math.ceil(RUNS / 3));
    const health = await open.server.inject({ method: 'GET', url: '/osm/api/health' });
    expect(health.statusCode).toBe(200);
  }, 120_000);
});

describe('fuzz without credentials', () => {
  it('every non-public route answers 401 with the envelope whatever the input', async () => {
    for (const route of routesOf(authed.server).filter((r) => accessOf(r.method, r.url) !== 'public')) {
      await fc.assert(
        fc.asyncProperty(requestArb(route), async (req) => {
          const before = dbChecksum(authed);
          const res = await authed.server.inject({ method: req.method, url: req.url, headers: { ...req.headers, 'x-osm-api-key': 'wrong' }, payload: req.payload });
          const where = `${req.method} ${req.url.slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
          // A URL the router cannot read (bad percent-encoding, an over-long parameter) is answered
          // before authentication runs: with nothing about the route.
          const body = res.json();
          expect(body, where).toEqual({ error: true, message: expect.any(String) });
          // Unmatched paths are protected too (deny by default): 401, never a 404 that tells routes apart.
          if (res.statusCode === 400) expect(body.message, where).toBe('Malformed URL: invalid percent-encoding in the path');
          else if (res.statusCode === 414) expect(body.message, where).toMatch(/^URI Too Long/);
          else expect(res.statusCode, where).toBe(401);
          expect(dbChecksum(authed), where).toBe(before);
        }),
        { numRuns: 5, seed: SEED, endOnFailure: true },
      );
    }
  }, 60_000);
});

/** One raw request over a loopback socket: the path reaches the router exactly as written. */
function rawRequest(port: number, method: string, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Ways to respell a path; each keeps it pointing at the same route for a naive prefix check. */
const MANGLE = fc.constantFrom(
  (p: string, i: number) => p.replace(/[a-z]/gi, (c, at: number) => (at % 7 === i % 7 ? `%${c.charCodeAt(0).toString(16)}` : c)),
  (p: string, i: number) => p.replace(/[a-z]/gi, (c, at: number) => (at % 5 === i % 5 ? `%${c.charCodeAt(0).toString(16).toUpperCase()}` : c)),
  (p: string, i: number) => p.replace(/\//g, (s: string, at: number) => (at > 0 && at % 3 === i % 3 ? '//' : s)),
  (p: string) => p.replace('/api/', '/./api/'),
  (p: string) => p.replace('/api/', '/x/../api/'),
  (p: string) => p.replace('/api/', '/%2e/api/'),
  (p: string) => p.replace('/api/', '/%2e%2e/osm/api/'),
  (p: string) => p.replace(/\/([^/]*)$/, '%2f$1'),
  (p: string) => p.toUpperCase(),
  (p: string, i: number) => p.replace(/[a-z]/g, (c, at: number) => (at % 2 === i % 2 ? c.toUpperCase() : c)),
  (p: string) => `${p}/`,
  (p: string) => `${p}.`,
  (p: string) => `${p};jsessionid=1`,
  (p: string) => p.replace('/osm/', '/osm;x=1/'),
  (p: string) => `${p}%20`,
  (p: string) => `${p}%00`,
  (p: string) => `${p}?a=%2F..%2F`,
  (p: string) => `${p}#frag`,
);

describe('fuzz of path spellings without credentials (real socket)', () => {
  it('no spelling of a protected route gets past authentication, none gives a 500', async () => {
    await authed.server.listen({ host: '127.0.0.1', port: 0 });
    const port = (authed.server.server.address() as { port: number }).port;
    const routes = routesOf(authed.server).filter((r) => accessOf(r.method, r.url) !== 'public');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.array(fc.tuple(MANGLE, fc.nat(20)), { minLength: 1, maxLength: 4 }), fc.constantFrom('route', 'HEAD', 'OPTIONS', 'GET', 'POST'), async (route, ops, m) => {
        let p = route.url.replace(/:[A-Za-z_]+/g, '1');
        for (const [op, i] of ops) p = op(p, i);
        const method = m === 'route' ? route.method : m;
        const res = await rawRequest(port, method, p);
        const where = `${method} ${p} → ${res.status} ${res.body.slice(0, 200)}`;
        expect(res.status, where).not.toBeGreaterThanOrEqual(500);
        if (res.status === 400) {
          if (method !== 'HEAD') expect(res.body, where).toContain('Malformed URL');
        }
        else expect(res.status, where).toBe(401);
      }),
      { numRuns: Math.max(200, RUNS * 10), seed: SEED, endOnFailure: true },
    );
  }, 120_000);
});
