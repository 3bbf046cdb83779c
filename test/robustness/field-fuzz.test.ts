/**
 * One hostile field at a time, on every route (issue 11, "0 × 500"). fuzz.test.ts sends wholly
 * hostile requests, which validation rejects early; an attacker instead takes a VALID request and
 * swaps ONE field (a query key, a path parameter, a body key, a key one level down, a multipart
 * field or file name) for a hostile value: wrong types, empty and 1 MB strings, huge / negative /
 * non-finite numbers, NUL / CRLF / unicode, path traversal, `__proto__`, impossible dates,
 * over-long durations, deep nesting. For every request: no 5xx (except the documented upstream
 * failures), every error is exactly `{ error: true, message }`, and no message carries a stack
 * trace or a server path.
 *
 * Each route has a valid example (the table EXAMPLES), checked first: it must succeed, so the
 * mutations really reach the handler. Values are sampled per field with a fixed seed
 * (FIELD_FUZZ_SEED to change it, FIELD_FUZZ_ALL=1 to send every value to every field).
 * The run queue is not started: runs created here stay queued and execute nothing.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { makeSqliteTestServer as makeTestServer, type SqliteTestServer as TestServer } from '../helpers/server.js';
import { routesOf, type RouteSpec } from '../../src/server/route.js';
import { registerWebhookRuns } from '../../src/services/webhook-runs.js';
import { setSettingValue } from '../../src/settings/set.js';
import { createToken } from '../../src/services/tokens.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import fs from 'node:fs';

type AnyRoute = RouteSpec<any, any, any>;
const keyOf = (r: { method: string; url: string }) => `${r.method} ${r.url}`;

const SEED = Number(process.env.FIELD_FUZZ_SEED ?? 20261127);
const ALL = process.env.FIELD_FUZZ_ALL === '1';
/** Values sent per field when sampling (the whole list with FIELD_FUZZ_ALL=1). */
const PER_FIELD = Number(process.env.FIELD_FUZZ_PER_FIELD ?? 10);
/** FIELD_FUZZ_LOG=1: print each problem and each route's request count and time as they happen. */
const LOG = process.env.FIELD_FUZZ_LOG === '1';
/** FIELD_FUZZ_ONLY=regex: only the routes whose "METHOD /url" matches (to replay one route). */
const ONLY = process.env.FIELD_FUZZ_ONLY ? new RegExp(process.env.FIELD_FUZZ_ONLY) : undefined;
/**
 * Routes that evaluate a script in an evaluator process, or rewrite and reload the settings file
 * (tens to hundreds of ms a request, and the settings have a hundred fields): fewer values
 * per field, whatever FIELD_FUZZ_ALL says.
 */
const SLOW: Record<string, number> = { 'POST /osm/api/functions/eval': 3, 'POST /osm/api/functions/execute': 3, 'PUT /osm/api/settings/yaml': 2 };
const TIMEOUT = Number(process.env.FIELD_FUZZ_TIMEOUT_MS ?? 180_000);

/** mulberry32: a small seeded generator, so a failure replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- hostile values --------------------------------------------------------------------------------

const MB = 'x'.repeat(1024 * 1024);
const deepArray = (n: number): unknown => (n === 0 ? 'leaf' : [deepArray(n - 1)]);
const deepObject = (n: number): unknown => (n === 0 ? 'leaf' : { a: deepObject(n - 1) });

/** Strings, for query values, path parameters, multipart fields and string-typed body fields. */
const HOSTILE_STRINGS: string[] = [
  '', ' ', MB, '\u0000', 'a\u0000b', 'a\r\nX-Injected: 1', '\r\n\r\n', '😀名\u202e\u0301', '\ud800',
  '../../../../etc/passwd', '..', '../', '/etc/passwd', '..\\..\\windows\\win.ini', '%2e%2e%2f', 'file:///etc/passwd',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
  '0', '-1', '-0', '1.5', '1e308', '-1e308', '1e309', 'NaN', 'Infinity', '-Infinity', '9007199254740993', '99999999999999999999', '0x10',
  'true', 'false', 'null', 'undefined', '[]', '{}',
  '9999-99-99', '0000-00-00', '2026-13-45T25:61:61Z', '+275760-09-13T00:00:00.001Z', '-271821-04-20T00:00:00Z', '99999-12-31',
  '99999999999d', '9999999999999999999s', '-1d', '0d', '1y', '1.5h', 'P1D', '1e309d', 'NaNd',
  "'; DROP TABLE runs; --", '$(id)', '`id`', '{{Target}}', '{{.}}', '*', '?', '#', '&a=b', '%00', '%',
];

/** JSON values, for body fields: the strings above plus every other JSON type. */
const HOSTILE_JSON: unknown[] = [
  ...HOSTILE_STRINGS,
  0, 1, -1, -0, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 99999999999, -99999999999,
  true, false, null, [], [null], ['a', 1, null], [[[]]], {}, { a: 1 }, { __proto__: null, constructor: { prototype: { polluted: 1 } } },
  [MB], { [MB.slice(0, 70_000)]: 1 }, Array.from({ length: 10_000 }, (_, i) => `x${i}`),
  deepArray(200), deepObject(200),
];

/** Extra keys added to a body or a query (prototype pollution attempts). */
const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype'];

// ---- the route table's valid examples ------------------------------------------------------------

interface Multipart {
  fields: Record<string, string>;
  file?: { field: string; name: string; content: string | Buffer };
}

interface Example {
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** A JSON body (an object). */
  body?: Record<string, unknown>;
  /** A text body (PUT /settings/yaml). */
  text?: string;
  /**
   * The text body or the uploaded file is this YAML document: its keys (one level down) are
   * mutated too, except `skipYaml` (paths whose change would lock the test out or move folders).
   */
  yaml?: { doc: Record<string, unknown>; into: 'text' | 'file'; skip?: RegExp };
  multipart?: Multipart;
  /** Statuses the valid example may get (default: any 2xx). */
  ok?: number[];
}

/** Objects the examples name (filled in beforeAll). */
const fx: Record<string, string> = {};
let snapshotZip: Buffer = Buffer.alloc(0);
let settingsFile = '';
const WS = 'fuzz2.example.com';
const OTHER = 'other.fuzz2.example.com';

/**
 * Routes whose valid input would reach the network or spawn a program (registry and tool
 * installs, the ACP agent): for these only mutations that the body schema rejects are sent.
 */
const GUARDED = new Set(['POST /osm/api/registry-install', 'POST /osm/api/install/binary', 'POST /osm/api/install', 'POST /osm/api/agent/chat/completions']);

/** Routes that answer a documented 500 / 502 for an upstream failure, with its message. */
const NO_PROVIDER = /^No LLM providers configured$|^(LLM|Embedding) request failed: /;
const DOCUMENTED_500: Record<string, RegExp> = {
  'POST /osm/api/llm/v1/chat/completions': NO_PROVIDER,
  'POST /osm/api/llm/chat/completions': NO_PROVIDER,
  'POST /osm/api/llm/v1/embeddings': NO_PROVIDER,
  'POST /osm/api/llm/embeddings': NO_PROVIDER,
  'POST /osm/api/settings/reload': /^Failed to reload configuration: /,
  'POST /osm/api/snapshots/import': /^Failed to import snapshot: /,
  'POST /osm/api/agent/chat/completions': /^Agent execution failed: /,
};
const DOCUMENTED_EXTRA_KEYS: Record<string, string[]> = {
  'POST /osm/api/database/tables/:table/clear': ['valid_tables'],
};

const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, temperature: 0.5, top_p: 0.5, top_k: 1, n: 1, stream: false };

const EXAMPLES: Record<string, () => Example | Example[]> = {
  'GET /health': () => ({}),
  'GET /health/ready': () => ({ ok: [200, 503] }),
  'GET /server-info': () => ({}),
  'GET /status': () => ({}),
  'GET /api/info': () => ({}),
  'GET /osm/api/health': () => ({}),
  'POST /osm/api/login': () => ({ body: { username: 'fuzzer', password: 'fuzz-password-1' } }),
  'POST /osm/api/logout': () => ({}),
  'GET /osm/api/workflows': () => ({ query: { source: 'db', kind: 'module', tags: 'recon', search: 'sample', offset: '0', limit: '5' } }),
  'GET /osm/api/workflows/tags': () => ({}),
  'POST /osm/api/workflows/refresh': () => ({ query: { force: 'true' } }),
  'GET /osm/api/workflows/:name': () => ({ params: { name: 'sample-recon' }, query: { json: 'true' } }),
  'GET /osm/api/workflows/:name/lint': () => ({ params: { name: 'sample-recon' } }),
  'POST /osm/api/workflow-upload': () => {
    const doc = { kind: 'module', name: 'fuzz-up', description: 'd', tags: ['t'], params: [{ name: 'p', default: 'v' }], steps: [{ name: 's', type: 'bash', command: 'echo hi' }] };
    return { query: { force: 'true' }, multipart: { fields: {}, file: { field: 'file', name: 'fuzz-up.yaml', content: stringifyYaml(doc) } }, yaml: { doc, into: 'file' } };
  },
  'POST /osm/api/runs': () => [{ body: { flow: 'sample-flow', targets: [`t1.${WS}`, `t2.${WS}`], threads_hold: 2, heuristics_check: 'basic', concurrency: 1, labels: ['x'], scope: { include: [`.${WS}`], exclude: [`admin.${WS}`] } } }, { body: { module: 'sample-recon', target: 'run.fuzz2.example.com', params: { threads: '5' }, priority: 'low', timeout: 3600, workspace: WS, labels: ['a'], run_mode: 'local' } }],
  'GET /osm/api/runs': () => ({ query: { status: 'queued', workflow_name: 'sample-recon', target: WS, workspace: WS, offset: '0', limit: '5' } }),
  'GET /osm/api/runs/:id': () => ({ params: { id: fx.run! }, query: { include_steps: 'true', include_artifacts: 'true' } }),
  'DELETE /osm/api/runs/:id': () => ({ params: { id: fx.runDel! } }),
  'POST /osm/api/runs/:id/cancel': () => ({ params: { id: fx.runQueued! } }),
  'POST /osm/api/runs/:id/duplicate': () => ({ params: { id: fx.run! } }),
  'POST /osm/api/runs/:id/start': () => ({ params: { id: fx.runPending! }, ok: [200, 202, 400] }),
  'POST /osm/api/runs/:id/resume': () => ({ params: { id: fx.runCancel! }, ok: [200, 201, 202, 400] }),
  'GET /osm/api/runs/:id/steps': () => ({ params: { id: fx.run! } }),
  'GET /osm/api/runs/:id/artifacts': () => ({ params: { id: fx.run! } }),
  'GET /osm/api/runs/:id/logs': () => ({ params: { id: fx.run! }, query: { step: 's', tail: '10', format: 'jsonl' }, ok: [200, 404] }),
  'GET /osm/api/jobs/:job_id': () => ({ params: { job_id: fx.job! } }),
  'GET /osm/api/step-results': () => ({ query: { workspace: WS, status: 'completed', step_type: 'bash', run_id: '1', run_uuid: fx.run!, offset: '0', limit: '5' } }),
  'GET /osm/api/event-logs': () => ({ query: { topic: 't', name: 'n', source: 's', workspace: WS, run_id: '1', workflow_name: 'w', processed: 'true', offset: '0', limit: '5' } }),
  'GET /osm/api/events': () => ({ query: { topic: 't', run_id: fx.run!, from: '2026-01-01T00:00:00Z', to: '2026-12-31T00:00:00Z', offset: '0', limit: '5' } }),
  'GET /osm/api/stats': () => ({}),
  'POST /osm/api/upload-file': () => ({ multipart: { fields: {}, file: { field: 'file', name: 'targets.txt', content: 'a.example.com\nb.example.com\n' } } }),
  'GET /osm/api/settings/yaml': () => ({}),
  'GET /osm/api/settings/yaml/': () => ({}),
  'PUT /osm/api/settings/yaml': () => ({ text: fx.settingsYaml!, yaml: { doc: parseYaml(fx.settingsYaml!), into: 'text', skip: /^(base_folder|environments|server)\b/ } }),
  'POST /osm/api/settings/reload': () => ({}),
  'GET /osm/api/settings/status': () => ({}),
  'GET /osm/api/workspaces': () => ({ query: { offset: '0', limit: '5', search: 'fuzz', data_source: 'database', filesystem: 'true', org: 'default' } }),
  'GET /osm/api/workspaces/:name': () => ({ params: { name: WS } }),
  'DELETE /osm/api/workspaces/:name': () => ({ params: { name: fx.wsDel! }, query: { purge_files: 'true', purge: 'true' } }),
  'GET /osm/api/workspaces/:name/state-file': () => ({ params: { name: WS }, query: { state_file: 'state_file' }, ok: [200, 404] }),
  'POST /osm/api/functions/eval': () => ({ body: { script: 'trim(Target) + "!"', target: 'a.example.com', params: { k: 'v' } } }),
  'POST /osm/api/functions/execute': () => ({ body: { expression: 'trim(x)', context: { x: ' y ' } } }),
  'GET /osm/api/functions/list': () => ({}),
  'GET /osm/api/functions': () => ({ query: { category: 'string' } }),
  'POST /osm/api/llm/v1/chat/completions': () => ({ body: chat, ok: [500, 502] }),
  'POST /osm/api/llm/chat/completions': () => ({ body: chat, ok: [500, 502] }),
  'POST /osm/api/llm/v1/embeddings': () => ({ body: { input: ['hi'], model: 'm' }, ok: [500, 502] }),
  'POST /osm/api/llm/embeddings': () => ({ body: { input: 'hi', model: 'm' }, ok: [500, 502] }),
  'GET /osm/api/schedules': () => ({ query: { offset: '0', limit: '5' } }),
  'POST /osm/api/schedules': () => [
    { body: { name: 'fz-#N#', workflow_name: 'sample-recon', workflow_kind: 'module', target: WS, trigger_type: 'cron', schedule: '0 3 * * *', enabled: false, params: { a: 'b' }, runner_type: 'host', workspace: WS } },
    { body: { name: 'fze-#N#', workflow_name: 'sample-recon', target: WS, trigger_type: 'event', event_topic: 'fuzz.topic', enabled: false, input_config: { type: 'param', name: 'x' } } },
    { body: { name: 'fzw-#N#', workflow_name: 'sample-recon', target: WS, trigger_type: 'watch', watch_path: 'watched', enabled: false } },
  ],
  'GET /osm/api/schedules/:id': () => ({ params: { id: fx.schedule! } }),
  'PUT /osm/api/schedules/:id': () => ({ params: { id: fx.schedule! }, body: { name: 'fz2', workflow_name: 'sample-recon', target: WS, trigger_type: 'cron', schedule: '0 4 * * *', enabled: false, params: { a: 'c' } } }),
  'DELETE /osm/api/schedules/:id': () => ({ params: { id: fx.scheduleDel! } }),
  'POST /osm/api/schedules/:id/enable': () => ({ params: { id: fx.schedule! } }),
  'POST /osm/api/schedules/:id/disable': () => ({ params: { id: fx.schedule! } }),
  'POST /osm/api/schedules/:id/trigger': () => ({ params: { id: fx.schedule! } }),
  'POST /osm/api/events/emit': () => ({ body: { topic: 'fuzz.topic', name: 'n', source: 's', data_type: 'json', data: { a: 1 }, workspace: WS, run_uuid: fx.run!, workflow_name: 'sample-recon' } }),
  'GET /osm/api/event-receiver/status': () => ({}),
  'GET /osm/api/event-receiver/workflows': () => ({}),
  'GET /osm/api/assets': () => ({ query: { workspace: WS, asset_type: 'subdomain', status_code: '200', search: 'x', org: 'default', offset: '0', limit: '5' } }),
  'GET /osm/api/assets/diff': () => ({ query: { workspace: WS, from: '2026-01-01T00:00:00Z', to: '2026-12-31T00:00:00Z' } }),
  'GET /osm/api/assets/diffs': () => ({ query: { workspace: WS, offset: '0', limit: '5' } }),
  'GET /osm/api/assets/:id': () => ({ params: { id: fx.asset! } }),
  'GET /osm/api/vulnerabilities': () => ({ query: { workspace: WS, severity: 'high', confidence: 'firm', asset_value: 'x', org: 'default', offset: '0', limit: '5' } }),
  'GET /osm/api/vulnerabilities/summary': () => ({ query: { workspace: WS } }),
  'GET /osm/api/vulnerabilities/diff': () => ({ query: { workspace: WS, from: '2026-01-01T00:00:00Z', to: '2026-12-31T00:00:00Z' } }),
  'GET /osm/api/vulnerabilities/diffs': () => ({ query: { workspace: WS, offset: '0', limit: '5' } }),
  'GET /osm/api/vulnerabilities/:id': () => ({ params: { id: fx.vuln! } }),
  'POST /osm/api/vulnerabilities': () => ({ body: { workspace: WS, vuln_title: 't', severity: 'high', confidence: 'firm', asset_value: `x.${WS}`, asset_type: 'subdomain', vuln_info: 'i', vuln_desc: 'd', vuln_poc: 'p', tags: ['a'], detail_http_request: 'GET /', detail_http_response: 'HTTP/1.1 200', raw_vuln_json: { a: 1 } } }),
  'DELETE /osm/api/vulnerabilities/:id': () => ({ params: { id: fx.vulnDel! } }),
  'POST /osm/api/vulnerabilities/import': () => ({ body: { workspace: WS, data: [{ vuln_title: 'imp', severity: 'low', asset_value: `y.${WS}` }, { 'template-id': 'tid', info: { name: 'n', severity: 'info' }, host: `z.${WS}`, 'matched-at': `https://z.${WS}/` }] } }),
  'GET /osm/api/snapshots': () => ({}),
  'POST /osm/api/snapshots/export': () => ({ body: { workspace: WS, include_artifacts: false } }),
  'GET /osm/api/snapshots/download/:name': () => ({ params: { name: fx.snapshot! } }),
  'GET /osm/api/snapshot-download/:workspace': () => ({ params: { workspace: WS } }),
  'DELETE /osm/api/snapshots/:name': () => ({ params: { name: fx.snapshotDel! } }),
  'POST /osm/api/snapshots/import': () => ({ multipart: { fields: { skip_db: 'false', force: 'true' }, file: { field: 'file', name: fx.snapshot!, content: snapshotZip } }, ok: [200, 201, 409] }),
  'GET /osm/api/registry-info': () => ({ query: { registry_mode: 'offline', registry_url: 'http://127.0.0.1:1/registry.json' }, ok: [200, 400, 502, 503] }),
  'POST /osm/api/registry-install': () => ({ body: { type: 'binary', names: ['nuclei'], install_all: false, install_optional: false, source: 'registry', registry_url: 'http://127.0.0.1:1/r.json', registry_mode: 'direct-fetch' } }),
  'GET /osm/api/install/registry': () => ({ query: { method: 'direct-fetch' }, ok: [200, 400, 502, 503] }),
  'GET /osm/api/install/status/:binary_name': () => ({ params: { binary_name: 'nuclei' } }),
  'POST /osm/api/install/binary': () => ({ body: { name: 'nuclei', method: 'direct-fetch' } }),
  'POST /osm/api/install': () => ({ body: { type: 'workflow', name: 'x' } }),
  'GET /osm/api/workers': () => ({ ok: [200, 400] }),
  'GET /osm/api/workers/:id': () => ({ params: { id: 'w1' }, ok: [400, 404] }),
  'POST /osm/api/workers/:id/drain': () => ({ params: { id: 'w1' }, ok: [400, 404] }),
  'GET /osm/api/tasks': () => ({ query: { limit: '5' }, ok: [200, 400] }),
  'GET /osm/api/tasks/:id': () => ({ params: { id: 't1' }, ok: [400, 404] }),
  'POST /osm/api/tasks': () => ({ body: { workflow: 'sample-recon', workflow_name: 'sample-recon', workflow_kind: 'module', target: WS, params: { a: 'b' }, priority: 'low', labels: ['a'] }, ok: [400] }),
  'POST /osm/api/webhook-runs/:uuid/trigger': () => ({ params: { uuid: fx.webhook! }, query: { key: 'fuzz-key' }, body: { target: `hooked.${WS}`, module: 'sample-recon' } }),
  'GET /osm/api/webhook-runs/:uuid/trigger': () => ({ params: { uuid: fx.webhook! }, query: { key: 'fuzz-key' } }),
  'GET /osm/api/webhook-runs/list': () => ({ query: { offset: '0', limit: '5' } }),
  'DELETE /osm/api/webhook-runs/:uuid': () => ({ params: { uuid: fx.webhookDel! } }),
  'GET /osm/api/artifacts': () => ({ query: { workspace: WS, search: 'x', status_code: '200', statusCode: '200', verify_exist: 'true', offset: '0', limit: '5' } }),
  'GET /osm/api/artifacts/:workspace_name': () => ({ params: { workspace_name: WS }, query: { artifact_path: 'runtime.json' }, ok: [200, 404] }),
  'GET /osm/api/database/tables': () => ({}),
  'POST /osm/api/database/tables/:table/clear': () => ({ params: { table: 'event_logs' }, body: { force: true } }),
  'GET /osm/api/workspace-names': () => ({}),
  'GET /osm/api/asset-stats': () => ({ query: { workspace: WS } }),
  'GET /osm/api/orgs': () => ({}),
  'POST /osm/api/orgs': () => ({ body: { name: 'fuzz-org-#N#', description: 'd', tags: ['t'], uuid: '' } }),
  'GET /osm/api/orgs/:uuid': () => ({ params: { uuid: fx.org! } }),
  'GET /osm/api/orgs/:uuid/stats': () => ({ params: { uuid: fx.org! } }),
  'PUT /osm/api/orgs/:uuid': () => ({ params: { uuid: fx.org! }, body: { name: 'fuzz-org', description: 'd2', tags: ['u'], workspaces: [WS] } }),
  'DELETE /osm/api/orgs/:uuid': () => ({ params: { uuid: fx.orgDel! }, query: { purge: 'false' } }),
  'GET /osm/api/whoami': () => ({}),
  'GET /osm/api/users': () => ({}),
  'POST /osm/api/users': () => ({ body: { username: 'fuzz-user-#N#', password: 'a-long-password-1', role: 'viewer', orgs: ['fuzz-org'] } }),
  'GET /osm/api/users/:username': () => ({ params: { username: 'fuzzer' } }),
  'PUT /osm/api/users/:username': () => ({ params: { username: 'fuzzer' }, body: { role: 'operator', orgs: ['fuzz-org'], password: 'fuzz-password-1' } }),
  'DELETE /osm/api/users/:username': () => ({ params: { username: 'fuzz-del-user' } }),
  'GET /osm/api/tokens': () => ({ query: { all: 'true' } }),
  'POST /osm/api/tokens': () => ({ body: { name: 'fuzz-token-#N#', role: 'viewer', orgs: ['fuzz-org'], expires: '30d' } }),
  'DELETE /osm/api/tokens/:id': () => ({ params: { id: fx.tokenDel! } }),
  'GET /osm/api/audit': () => ({ query: { actor: 'admin', since: '2026-01-01T00:00:00Z', result: 'ok', after_id: '0', format: 'json', offset: '0', limit: '5' } }),
  'POST /osm/api/agent/chat/completions': () => ({ body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } }),
  'GET /osm/api/events/stream': () => ({}),
};

/** Routes sent last, in this order (they delete fixtures or replace the settings). */
const LAST = [
  'DELETE /osm/api/runs/:id', 'DELETE /osm/api/schedules/:id', 'DELETE /osm/api/vulnerabilities/:id', 'DELETE /osm/api/snapshots/:name', 'DELETE /osm/api/webhook-runs/:uuid',
  'DELETE /osm/api/tokens/:id', 'DELETE /osm/api/users/:username', 'DELETE /osm/api/orgs/:uuid', 'DELETE /osm/api/workspaces/:name',
  'POST /osm/api/database/tables/:table/clear', 'POST /osm/api/settings/reload', 'PUT /osm/api/settings/yaml',
];

/** Streams: their baseline is checked on the status line only (the body never ends). */
const STREAMS = new Set(['GET /osm/api/events/stream']);

// ---- requests ---------------------------------------------------------------------------------------

interface Req {
  route: string;
  what: string;
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  /** Raw query text appended as is (hostile keys). */
  rawQuery?: string;
  body?: unknown;
  /** Body sent exactly as given (JSON text with a `__proto__` key). */
  rawJson?: string;
  text?: string;
  multipart?: Multipart;
}

function multipartPayload(m: Multipart): { payload: Buffer; type: string } {
  const b = 'fieldFuzzB0undary';
  const clean = (s: string) => s.replace(/[\r\n"]/g, '_');
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(m.fields)) parts.push(Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="${clean(k)}"\r\n\r\n${v}\r\n`));
  if (m.file) {
    parts.push(Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="${clean(m.file.field)}"; filename="${clean(m.file.name)}"\r\nContent-Type: application/octet-stream\r\n\r\n`));
    parts.push(Buffer.isBuffer(m.file.content) ? m.file.content : Buffer.from(m.file.content));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${b}--\r\n`));
  return { payload: Buffer.concat(parts), type: `multipart/form-data; boundary=${b}` };
}

/** encodeURIComponent, with a lone surrogate sent as its (invalid) UTF-8 bytes. */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return `${encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))}%ED%A0%80`;
  }
}

function urlOf(route: string, r: Req): string {
  let url = route.split(' ')[1]!;
  for (const [k, v] of Object.entries(r.params)) url = url.replace(`:${k}`, enc(v));
  const parts: string[] = [];
  for (const [k, v] of Object.entries(r.query)) for (const one of Array.isArray(v) ? v : [v]) parts.push(`${enc(k)}=${enc(one)}`);
  if (r.rawQuery) parts.push(r.rawQuery);
  return parts.length ? `${url}?${parts.join('&')}` : url;
}

let counter = 0;
/**
 * FIELD_FUZZ_AS=bound: send the mutations as an operator bound to org "fuzz-org" (other code
 * paths: scope checks); valid examples then may be refused and are not checked.
 */
const AS_BOUND = process.env.FIELD_FUZZ_AS === 'bound';
let callerAuth: Record<string, string> | undefined;

async function send(t: TestServer, r: Req) {
  const [method] = r.route.split(' ') as ['GET' | 'POST' | 'PUT' | 'DELETE'];
  const headers: Record<string, string> = { ...(callerAuth ?? t.auth) };
  let payload: string | Buffer | undefined;
  if (r.multipart) {
    const m = multipartPayload(r.multipart);
    payload = m.payload;
    headers['content-type'] = m.type;
  } else if (r.text !== undefined) {
    payload = r.text;
    headers['content-type'] = 'text/plain';
  } else if (r.rawJson !== undefined || r.body !== undefined) {
    // '#N#' in a body value becomes a fresh number: names that must be unique stay unique.
    payload = (r.rawJson ?? JSON.stringify(r.body)).replace(/#N#/g, () => String(++counter));
    headers['content-type'] = 'application/json';
  }
  return t.server.inject({ method, url: urlOf(r.route, r), headers, payload });
}

/** Keys a zod object schema knows about (top level). */
function keysOf(schema: z.ZodType | undefined): string[] {
  const s = schema as unknown as { shape?: Record<string, unknown>; _zod?: { def?: { shape?: Record<string, unknown>; in?: unknown; innerType?: unknown } } } | undefined;
  const shape = s?.shape ?? s?._zod?.def?.shape;
  if (shape && typeof shape === 'object') return Object.keys(shape);
  const inner = (s?._zod?.def?.in ?? s?._zod?.def?.innerType) as z.ZodType | undefined;
  return inner && inner !== schema ? keysOf(inner) : [];
}

/** Values every field always gets besides the sample (each found a 500 somewhere). */
const ALWAYS: unknown[] = [MB, '99999999999999999999', '99999999999d', '9999-99-99'];

function sampleN<T>(values: T[], rand: () => number, n = ALL ? Infinity : PER_FIELD): T[] {
  if (values.length <= n) return values;
  const pool = values.filter((v) => !ALWAYS.includes(v));
  const out: T[] = values.filter((v) => ALWAYS.includes(v));
  n += out.length;
  while (out.length < n) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
}

const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every one-field mutation of a route's valid example. */
function mutations(route: AnyRoute, ex: Example, random: () => number): Req[] {
  const key = keyOf(route);
  const rand = random;
  const sample = <T,>(values: T[], r: () => number) => sampleN(values, r, SLOW[key]);
  const base = (): Req => ({ route: key, what: '', params: { ...ex.params }, query: { ...ex.query }, body: ex.body ? structuredClone(ex.body) : undefined, text: ex.text, multipart: ex.multipart ? { fields: { ...ex.multipart.fields }, file: ex.multipart.file ? { ...ex.multipart.file } : undefined } : undefined });
  const out: Req[] = [];
  for (const p of Object.keys(ex.params ?? {})) {
    for (const v of sample(HOSTILE_STRINGS.filter((s) => s.length < 2000), rand)) out.push({ ...base(), what: `param ${p}=${JSON.stringify(v.slice(0, 40))}`, params: { ...ex.params, [p]: v } });
  }
  const queryKeys = [...new Set([...Object.keys(ex.query ?? {}), ...keysOf(route.query)])];
  for (const q of queryKeys) {
    for (const v of sample(HOSTILE_STRINGS, rand)) out.push({ ...base(), what: `query ${q}=${JSON.stringify(v.slice(0, 40))}`, query: { ...ex.query, [q]: v } });
    out.push({ ...base(), what: `query ${q} twice`, query: { ...ex.query, [q]: [ex.query?.[q] ?? '1', '2'] } });
  }
  for (const k of HOSTILE_KEYS) out.push({ ...base(), what: `query key ${k}`, rawQuery: `${k}=x&${k}[polluted]=1` });
  if (ex.body) {
    const bodyKeys = [...new Set([...Object.keys(ex.body), ...keysOf(route.body)])];
    for (const k of bodyKeys) {
      for (const v of sample(HOSTILE_JSON, rand)) out.push({ ...base(), what: `body ${k}=${JSON.stringify(v)?.slice(0, 40)}`, body: { ...ex.body, [k]: v } });
      out.push({ ...base(), what: `body ${k} missing`, body: Object.fromEntries(Object.entries(ex.body).filter(([n]) => n !== k)) });
      const inner = ex.body[k];
      if (isPlain(inner)) {
        for (const ik of [...Object.keys(inner), '__proto__', 'constructor']) {
          for (const v of sample(HOSTILE_JSON, rand)) out.push({ ...base(), what: `body ${k}.${ik}=${JSON.stringify(v)?.slice(0, 40)}`, rawJson: JSON.stringify({ ...ex.body, [k]: { ...inner, [ik]: v } }) });
        }
      } else if (Array.isArray(inner) && inner.length > 0) {
        for (const v of sample(HOSTILE_JSON, rand)) out.push({ ...base(), what: `body ${k}[0]=${JSON.stringify(v)?.slice(0, 40)}`, body: { ...ex.body, [k]: [v, ...inner.slice(1)] } });
        const first = inner[0];
        if (isPlain(first)) {
          for (const ik of Object.keys(first)) {
            for (const v of sample(HOSTILE_JSON, rand)) out.push({ ...base(), what: `body ${k}[0].${ik}=${JSON.stringify(v)?.slice(0, 40)}`, body: { ...ex.body, [k]: [{ ...first, [ik]: v }, ...inner.slice(1)] } });
          }
        }
      }
    }
    for (const k of HOSTILE_KEYS) {
      // JSON text keeps a literal "__proto__" key (an object literal would set the prototype).
      const json = JSON.stringify(ex.body);
      out.push({ ...base(), what: `body key ${k}`, rawJson: `{"${k}":{"polluted":1,"prototype":{"polluted":1}},${json.slice(1)}` });
    }
  }
  if (ex.multipart) {
    for (const f of Object.keys(ex.multipart.fields)) {
      for (const v of sample(HOSTILE_STRINGS, rand)) {
        const m = base().multipart!;
        m.fields[f] = v;
        out.push({ ...base(), what: `multipart ${f}=${JSON.stringify(v.slice(0, 40))}`, multipart: m });
      }
    }
    if (ex.multipart.file) {
      for (const v of sample(HOSTILE_STRINGS, rand)) {
        const m = base().multipart!;
        m.file = { ...m.file!, name: v };
        out.push({ ...base(), what: `file name ${JSON.stringify(v.slice(0, 40))}`, multipart: m });
      }
      for (const v of sample(HOSTILE_STRINGS, rand)) {
        const m = base().multipart!;
        m.file = { ...m.file!, content: v };
        out.push({ ...base(), what: `file content ${JSON.stringify(v.slice(0, 40))}`, multipart: m });
      }
    }
  }
  if (ex.yaml) {
    const { doc, into, skip } = ex.yaml;
    const put = (d: unknown, what: string): Req => {
      const text = stringifyYaml(d);
      const r = base();
      if (into === 'text') r.text = text;
      else r.multipart!.file = { ...r.multipart!.file!, content: text };
      return { ...r, what };
    };
    for (const [k, v] of Object.entries(doc)) {
      if (skip?.test(k)) continue;
      for (const h of sample(HOSTILE_JSON.filter((x) => x !== MB), rand)) out.push(put({ ...doc, [k]: h }, `yaml ${k}=${JSON.stringify(h)?.slice(0, 40)}`));
      const inner = Array.isArray(v) && isPlain(v[0]) ? v[0] : isPlain(v) ? v : undefined;
      if (!inner) continue;
      for (const ik of Object.keys(inner)) {
        if (skip?.test(`${k}.${ik}`)) continue;
        for (const h of sample(HOSTILE_JSON.filter((x) => x !== MB), rand)) {
          const changed = { ...inner, [ik]: h };
          out.push(put({ ...doc, [k]: Array.isArray(v) ? [changed, ...v.slice(1)] : changed }, `yaml ${k}.${ik}=${JSON.stringify(h)?.slice(0, 40)}`));
        }
      }
    }
  }
  if (ex.text !== undefined) {
    for (const v of sample(HOSTILE_STRINGS, rand)) out.push({ ...base(), what: `text ${JSON.stringify(v.slice(0, 40))}`, text: v });
  }
  return out;
}

// ---- the checks -------------------------------------------------------------------------------------

let t: TestServer;
const REPO = path.resolve(__dirname, '../..');

function problemsOf(route: string, r: Req, res: { statusCode: number; headers: Record<string, unknown>; body: string }): string[] {
  const where = `${route} [${r.what}] → ${res.statusCode} ${res.body.slice(0, 200)}`;
  const out: string[] = [];
  if (res.statusCode >= 500) {
    const allowed = DOCUMENTED_500[route];
    let msg = '';
    try {
      msg = JSON.parse(res.body).message;
    } catch {
      /* not JSON */
    }
    if (!allowed || !allowed.test(msg)) out.push(`5xx: ${where}`);
  }
  if (res.statusCode >= 400) {
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(res.body);
    } catch {
      out.push(`not JSON: ${where}`);
    }
    if (body) {
      const extra = DOCUMENTED_EXTRA_KEYS[route] ?? [];
      const keys = Object.keys(body).filter((k) => !extra.includes(k)).sort();
      if (keys.join(',') !== 'error,message' || body.error !== true || typeof body.message !== 'string' || !body.message.trim()) out.push(`not the envelope: ${where}`);
    }
  }
  // Whatever the status: no stack frame, no server path.
  if (/\n\s+at .+:\d+:\d+|at (?:async )?[\w.<>]+ \(/.test(res.body)) out.push(`stack trace: ${where}`);
  // Error messages name no server path (success bodies may: workflow file_path, upload path).
  if (res.statusCode >= 400) for (const p of [t.base, REPO]) if (res.body.includes(p)) out.push(`server path ${p}: ${where}`);
  return out;
}

beforeAll(async () => {
  t = await makeTestServer();
  setSettingValue(t.app.manager.path, 'server.enable_trigger_via_webhook', 'true');
  t.app.manager.reload();
  const inj = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.server.inject({ method, url, headers: t.auth, ...(payload ? { payload } : {}) });
  const run = async (target: string, workspace = WS) => (await inj('POST', '/osm/api/runs', { module: 'sample-recon', target, workspace })).json();
  const r1 = await run(WS);
  fx.run = r1.run_uuid;
  fx.job = r1.job_id;
  // Fixtures of deleting routes live in another workspace (the snapshot import replaces WS's rows).
  fx.runDel = (await run(`del.${WS}`, OTHER)).run_uuid;
  fx.runCancel = (await run(`cancel.${WS}`)).run_uuid;
  await inj('POST', `/osm/api/runs/${fx.runCancel}/cancel`);
  fx.runPending = fx.runCancel;
  fx.runQueued = (await run(`queued.${WS}`)).run_uuid;
  t.app.store.assets.upsertMany(WS, [{ asset_value: `x.${WS}` } as never]);
  fx.asset = String(t.app.store.assets.list({ workspace: WS }, { offset: 0, limit: 1 }).data[0]!.id);
  fx.vuln = String((await inj('POST', '/osm/api/vulnerabilities', { workspace: WS, vuln_title: 'v' })).json().data.id);
  fx.vulnDel = String((await inj('POST', '/osm/api/vulnerabilities', { workspace: OTHER, vuln_title: 'd' })).json().data.id);
  const sched = { workflow_name: 'sample-recon', target: WS, schedule: '0 3 * * *', enabled: false };
  fx.schedule = String((await inj('POST', '/osm/api/schedules', { name: 's1', ...sched })).json().data.id);
  fx.scheduleDel = String((await inj('POST', '/osm/api/schedules', { name: 's2', ...sched })).json().data.id);
  const exp = await inj('POST', '/osm/api/snapshots/export', { workspace: WS });
  fx.snapshot = String(exp.headers['content-disposition']).split('filename=')[1]!.replace(/"/g, '');
  snapshotZip = exp.rawPayload;
  fx.snapshotDel = String((await inj('POST', '/osm/api/snapshots/export', { workspace: WS })).headers['content-disposition']).split('filename=')[1]!.replace(/"/g, '');
  fx.org = (await inj('POST', '/osm/api/orgs', { name: 'fuzz-org' })).json().data.uuid;
  fx.orgDel = (await inj('POST', '/osm/api/orgs', { name: 'fuzz-org-del' })).json().data.uuid;
  fx.wsDel = `wsdel.${WS}`;
  await inj('POST', `/osm/api/runs/${(await run(fx.wsDel, fx.wsDel)).run_uuid}/cancel`);
  t.app.store.assets.upsertMany(fx.wsDel, [{ asset_value: `a.${fx.wsDel}` } as never]);
  await inj('POST', '/osm/api/users', { username: 'fuzzer', password: 'fuzz-password-1', role: 'viewer' });
  await inj('POST', '/osm/api/users', { username: 'fuzz-del-user', password: 'fuzz-password-1', role: 'viewer' });
  fx.tokenDel = String((await inj('POST', '/osm/api/tokens', { name: 'fuzz-del-token', role: 'viewer' })).json().data?.id ?? '');
  const hooks = await registerWebhookRuns(t.app, { workflows: ['sample-recon'], targets: [`hook.${WS}`, `hook2.${WS}`], authKey: 'fuzz-key' });
  fx.webhook = hooks[0]!.webhook_uuid;
  fx.webhookDel = hooks[1]!.webhook_uuid;
  fx.settingsYaml = (await inj('GET', '/osm/api/settings/yaml')).body;
  settingsFile = fs.readFileSync(t.app.manager.path, 'utf8');
  if (AS_BOUND) callerAuth = { 'x-osm-api-key': (await createToken(t.app, { name: 'fuzz-bound', role: 'operator', orgs: ['fuzz-org'] })).token };
  for (const [k, v] of Object.entries(fx)) if (!v) throw new Error(`fixture ${k} was not created`);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('field fuzz: the table', () => {
  it('has a valid example for every route, and no example without a route', () => {
    const keys = routesOf(t.server).map(keyOf);
    expect(keys.filter((k) => !(k in EXAMPLES)), 'routes without an example').toEqual([]);
    expect(Object.keys(EXAMPLES).filter((k) => !keys.includes(k)), 'examples without a route').toEqual([]);
  });
});

/** Puts back the settings file as it was before the fuzzing, and reloads it. */
function restoreSettings(): void {
  fs.writeFileSync(t.app.manager.path, settingsFile);
  t.app.manager.reload();
}

/** The valid example succeeds (so the mutations of its fields reach the handler). */
async function checkValid(route: AnyRoute, ex: Example): Promise<string[]> {
  const key = keyOf(route);
  if (GUARDED.has(key) || STREAMS.has(key)) return [];
  const valid: Req = { route: key, what: 'valid example', params: ex.params ?? {}, query: ex.query ?? {}, body: ex.body, text: ex.text, multipart: ex.multipart };
  const res = await send(t, valid);
  const out = problemsOf(key, valid, res);
  if (AS_BOUND) return out;
  const okStatus = ex.ok ? ex.ok.includes(res.statusCode) : res.statusCode >= 200 && res.statusCode < 300;
  if (!okStatus) out.push(`valid example rejected: ${key} → ${res.statusCode} ${res.body.slice(0, 200)}`);
  return out;
}

describe('field fuzz: one hostile field at a time', () => {
  it('never a 5xx, always the envelope, no stack or path, on every field of every route', async () => {
    const rand = rng(SEED);
    const routes = routesOf(t.server);
    const order = [...routes.filter((r) => !LAST.includes(keyOf(r))), ...LAST.map((k) => routes.find((r) => keyOf(r) === k)!).filter(Boolean)];
    const problems: string[] = [];
    let sent = 0;
    for (const route of order) {
      const key = keyOf(route);
      const made = EXAMPLES[key]?.();
      if (!made || (ONLY && !ONLY.test(key))) continue;
      for (const ex of Array.isArray(made) ? made : [made]) {
        const muts = mutations(route, ex, rand);
        const started = Date.now();
        // The valid example first (a deleting one then deletes its fixture: the mutations that
        // follow still pass validation of every other field, then find nothing).
        problems.push(...(await checkValid(route, ex)));
        for (const r of muts) {
          if (GUARDED.has(key) && (r.body === undefined || !route.body || route.body.safeParse(r.rawJson !== undefined ? JSON.parse(r.rawJson) : r.body).success)) continue;
          if (STREAMS.has(key)) continue;
          const t0 = Date.now();
          const res = await send(t, r);
          sent++;
          if (LOG && Date.now() - t0 > 500) console.log(`SLOW ${key} [${r.what}] ${Date.now() - t0} ms → ${res.statusCode} ${res.body.slice(0, 150)}`);
          const found = problemsOf(key, r, res);
          if (LOG) for (const f of found) console.log(`PROBLEM ${f}`);
          problems.push(...found);
          // A settings mutation that was accepted is undone before the next one.
          if (key === 'PUT /osm/api/settings/yaml' && res.statusCode < 400) restoreSettings();
        }
        if (LOG) console.log(`ROUTE ${key}: ${muts.length} mutations, ${Date.now() - started} ms`);
        if (key === 'PUT /osm/api/settings/yaml') restoreSettings();
      }
    }
    if (!ONLY) expect(sent).toBeGreaterThan(1000);
    expect(problems).toEqual([]);
  }, TIMEOUT);
});

describe('field fuzz: regressions (each was a 500 or a leak)', () => {
  const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });

  it('an offset beyond 2^53 is a 400 naming the parameter; a huge limit is still capped', async () => {
    for (const route of ['workflows', 'runs', 'step-results', 'event-logs', 'events', 'schedules', 'assets', 'assets/diffs', 'vulnerabilities', 'workspaces', 'audit']) {
      const res = await get(`/osm/api/${route}?offset=99999999999999999999`);
      expect(res.statusCode, route).toBe(400);
      expect(res.json(), route).toEqual({ error: true, message: expect.stringMatching(/offset is out of range \(at most 9007199254740991\), got 99999999999999999999/) });
    }
    const capped = await get('/osm/api/runs?limit=99999999999999999999');
    expect(capped.statusCode).toBe(200);
    expect(capped.json().pagination.limit).toBe(10_000);
  });

  it('a 1 MB substring filter is a 400, not a database error', async () => {
    for (const url of [`/osm/api/workflows?search=${MB}`, `/osm/api/runs?target=${MB}`, `/osm/api/assets?search=${MB}`, `/osm/api/workspaces?search=${MB}`, `/osm/api/vulnerabilities?asset_value=${MB}`]) {
      const res = await get(url);
      expect(res.statusCode, url.slice(0, 40)).toBe(400);
      expect(res.json(), url.slice(0, 40)).toEqual({ error: true, message: `Filter text is too long: ${MB.length} characters (at most 1000)` });
    }
    // 1000 characters are still a filter.
    expect((await get(`/osm/api/runs?target=${'y'.repeat(1000)}`)).statusCode).toBe(200);
  });

  it('a constructor key in the settings YAML is an unknown key (it was a 500)', async () => {
    const doc = parseYaml(fx.settingsYaml!);
    for (const value of [{ constructor: { prototype: { polluted: 1 } } }, { constructor: 1 }]) {
      doc.redis = value;
      const res = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: { ...t.auth, 'content-type': 'text/plain' }, payload: stringifyYaml(doc) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'Invalid YAML configuration: unknown key: redis.constructor' });
    }
  });

  it('a refused target_file names no server path', async () => {
    for (const target_file of ['../../../../etc/passwd', '/etc/passwd']) {
      const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'sample-recon', target_file } });
      expect(res.statusCode).toBe(400);
      const { message } = res.json();
      expect(message).toMatch(/^Invalid target_file: .*it must be a file inside the uploads folder \(<base folder>\/external-data\/uploads\) or the data folder \(<base folder>\/external-data\)$/);
      expect(message).not.toContain(t.base);
    }
  });
});
