/** Pure pieces of distributed mode: Redis URL and prefix resolution, result bounds, worker status. */
import { describe, expect, it } from 'vitest';
import { parseRedisUrl, resolveDistributedConfig, resolvePrefix } from '../../src/distributed/redis-config.js';
import { boundResult, bullPriority, PROTOCOL_VERSION, RESULT_LIMITS, taskDataSchema, taskResultSchema, type TaskResult } from '../../src/distributed/protocol.js';
import { ExecutionLines } from '../../src/distributed/task-runner.js';
import { effectiveStatus, workerView, type WorkerEntry } from '../../src/distributed/worker-registry.js';
import { taskStatusOf } from '../../src/distributed/task-view.js';
import { labelMatches, needsOf, parseWorkerLabels, waitingReason } from '../../src/distributed/routing.js';
import { OFFLINE_AFTER_MS } from '../../src/distributed/keys.js';
import { FILE_CHUNK_BYTES, fileRecordSchema, isShippablePath } from '../../src/distributed/records.js';
import type { LoadedSettings } from '../../src/settings/index.js';

const settingsWith = (redis: Record<string, unknown>) => ({ settings: { redis } }) as unknown as LoadedSettings;

describe('parseRedisUrl', () => {
  it.each([
    ['redis://127.0.0.1:6379/0', { host: '127.0.0.1', port: 6379, db: 0, tls: false }],
    ['127.0.0.1', { host: '127.0.0.1', port: 6379, db: 0 }],
    ['redis.internal:6380/3', { host: 'redis.internal', port: 6380, db: 3 }],
    ['redis://user:p%40ss@h:1/2', { host: 'h', port: 1, db: 2, username: 'user', password: 'p@ss' }],
    ['redis://:secret@h', { host: 'h', password: 'secret', port: 6379 }],
    ['rediss://h', { host: 'h', tls: true, port: 6379 }],
    ['redis://[::1]:7000', { host: '::1', port: 7000 }],
  ])('%s', (url, expected) => {
    expect(parseRedisUrl(url)).toMatchObject(expected);
  });

  it('never shows the password', () => {
    const t = parseRedisUrl('redis://user:hunter2@h:6379/1');
    expect(t.display).toBe('redis://h:6379/1');
    expect(JSON.stringify(t.display)).not.toContain('hunter2');
  });

  it.each([
    ['', 'empty'],
    ['http://h', 'unsupported scheme http://'],
    ['redis://h:99999', 'cannot parse it'],
    ['redis://h/abc', 'database index'],
    ['redis://', 'host is missing'],
  ])('rejects %j', (url, message) => {
    expect(() => parseRedisUrl(url)).toThrow(message);
  });
});

describe('resolveDistributedConfig', () => {
  it('needs Redis from the URL or the settings', () => {
    expect(() => resolveDistributedConfig(settingsWith({ host: '', port: 6379 }))).toThrow('redis not configured. Add redis section to osm-settings.yaml or use --redis-url');
    const fromSettings = resolveDistributedConfig(settingsWith({ host: 'r', port: 6390, db: 2, password: 'pw', connection_timeout: 5 }));
    expect(fromSettings.redis).toMatchObject({ host: 'r', port: 6390, db: 2, password: 'pw', connectTimeoutMs: 5000, display: 'redis://r:6390/2' });
    expect(fromSettings.prefix).toBe(process.env.OSM_REDIS_PREFIX || 'osm');
    expect(resolveDistributedConfig(settingsWith({ host: 'r' }), { redisUrl: 'other:1' }).redis).toMatchObject({ host: 'other', port: 1 });
  });

  it('prefix: option, then env, then settings, then osm; junk refused', () => {
    const saved = process.env.OSM_REDIS_PREFIX;
    try {
      delete process.env.OSM_REDIS_PREFIX;
      expect(resolvePrefix(settingsWith({}))).toBe('osm');
      expect(resolvePrefix(settingsWith({ prefix: 'fromsettings' }))).toBe('fromsettings');
      process.env.OSM_REDIS_PREFIX = 'fromenv';
      expect(resolvePrefix(settingsWith({ prefix: 'fromsettings' }))).toBe('fromenv');
      expect(resolvePrefix(settingsWith({}), 'explicit')).toBe('explicit');
      expect(() => resolvePrefix(settingsWith({}), 'a b*')).toThrow('invalid Redis key prefix');
    } finally {
      if (saved === undefined) delete process.env.OSM_REDIS_PREFIX;
      else process.env.OSM_REDIS_PREFIX = saved;
    }
  });
});

describe('protocol', () => {
  it('maps run priorities so that critical is served first', () => {
    expect(['critical', 'high', 'normal', 'low'].map((p) => bullPriority(p as 'low'))).toEqual([1, 2, 3, 4]);
  });

  it('task data is validated (a foreign or hostile job fails cleanly)', () => {
    const ok = { v: PROTOCOL_VERSION, run_uuid: '550e8400-e29b-41d4-a716-446655440000', workflow_name: 'w', workflow_kind: 'module', target: 'a.com', submitted_at: 'now' };
    expect(taskDataSchema.parse(ok)).toMatchObject({ params: {}, priority: 'normal', options: {} });
    const bad = taskDataSchema.safeParse({ ...ok, run_uuid: '../x', workflow_kind: 'script', params: { a: 1 } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => i.path.join('.')).sort()).toEqual(['params.a', 'run_uuid', 'workflow_kind']);
  });

  const base = (): TaskResult => ({
    v: PROTOCOL_VERSION, worker_id: 'w', hostname: 'h',
    run: { status: 'completed', started_at: null, completed_at: null, error_message: '', total_steps: 1, completed_steps: 1, workspace: 'ws' },
    steps: [], events: [], artifacts: [], truncated: false,
  });
  const step = (output: string, exports: Record<string, unknown> = {}) => ({
    workspace: 'ws', module_name: 'm', step_name: 's', step_type: 'bash', step_index: 0, status: 'completed' as const, command: 'c', output, error_message: '',
    exports, duration_ms: 1, log_file: '', started_at: null, completed_at: null, created_at: 'x',
  });

  it('leaves a small result alone', () => {
    const r = { ...base(), steps: [step('hello')] };
    expect(boundResult(r)).toEqual(r);
  });

  it('cuts long outputs and exports and says so', () => {
    const r = boundResult({ ...base(), steps: [step('x'.repeat(RESULT_LIMITS.stepOutput + 10), { big: 'y'.repeat(RESULT_LIMITS.exportsBytes) })] });
    expect(r.truncated).toBe(true);
    expect(r.steps[0]!.output.length).toBeLessThan(RESULT_LIMITS.stepOutput + 200);
    expect(r.steps[0]!.output).toContain('[truncated by the worker');
    expect(Object.keys(r.steps[0]!.exports)).toEqual(['_truncated']);
  });

  it('keeps the whole result under the size limit', () => {
    const many = Array.from({ length: 600 }, () => step('z'.repeat(RESULT_LIMITS.stepOutput)));
    const r = boundResult({ ...base(), steps: many });
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(RESULT_LIMITS.maxBytes);
    expect(r.truncated).toBe(true);
    expect(r.steps).toHaveLength(600);
  });

  const jsonLines = (text: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { message: string; worker_id?: string });

  it("a run's execution-log lines are kept whole up to their limit, then a JSON line says what stayed on the worker", () => {
    const lines = new ExecutionLines();
    const line = (i: number) => `${JSON.stringify({ timestamp: 't', level: 'INFO', message: `line ${i}`, pad: 'p'.repeat(1000) })}\n`;
    const n = Math.ceil(RESULT_LIMITS.executionLog / line(0).length) + 50;
    for (let i = 0; i < n; i++) lines.add(line(i));
    const text = lines.text('w-7');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(RESULT_LIMITS.executionLog + 1024);
    const parsed = jsonLines(text);
    const kept = parsed.slice(0, -1);
    expect(kept.map((l) => l.message)).toEqual(Array.from({ length: kept.length }, (_, i) => `line ${i}`));
    expect(kept.length).toBeLessThan(n);
    const note = parsed.at(-1)!;
    expect(note.worker_id).toBe('w-7');
    const omitted = Array.from({ length: n - kept.length }, (_, i) => line(kept.length + i).length).reduce((a, b) => a + b, 0);
    expect(note.message).toContain(`${omitted} bytes of this run's execution log were not sent`);
    // The whole result passes its own schema.
    expect(taskResultSchema.safeParse({ ...base(), execution_log: text }).success).toBe(true);
    // Under the limit nothing is added.
    const few = new ExecutionLines();
    few.add(line(1));
    expect(few.text('w')).toBe(line(1));
  });

  it('a result too large keeps only the first execution-log lines within the tight limit', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `${JSON.stringify({ message: `l${i}`, pad: 'q'.repeat(1000) })}\n`).join('');
    const many = Array.from({ length: 600 }, () => step('z'.repeat(RESULT_LIMITS.stepOutput)));
    const r = boundResult({ ...base(), steps: many, execution_log: lines });
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(RESULT_LIMITS.maxBytes);
    expect(Buffer.byteLength(r.execution_log!)).toBeLessThanOrEqual(RESULT_LIMITS.executionLogTight + 1024);
    const parsed = jsonLines(r.execution_log!);
    expect(parsed[0]!.message).toBe('l0');
    expect(parsed.at(-1)!.message).toContain("bytes of this run's execution log were not sent");
    // A small result keeps its lines as they are.
    expect(boundResult({ ...base(), execution_log: lines }).execution_log).toBe(lines);
  });
});

describe('worker status', () => {
  const entry = (over: Partial<WorkerEntry> = {}): WorkerEntry => ({
    id: 'w1', instance: 'i', hostname: 'h', pid: 1, status: 'busy', current_tasks: ['t1'], concurrency: 1, joined_at: 'j',
    last_heartbeat: new Date(1_000_000).toISOString(), tasks_complete: 3, tasks_failed: 1, version: 'v', ...over,
  });
  const now = 1_000_000;

  it('is what the worker says while its heartbeat is fresh and its connection is alive', () => {
    expect(effectiveStatus(entry(), now + 1000, new Set(['w1']))).toBe('busy');
    expect(effectiveStatus(entry(), now + 1000, undefined)).toBe('busy');
  });

  it('is offline after 30 s without a heartbeat, without a live connection, or when it left', () => {
    expect(effectiveStatus(entry(), now + OFFLINE_AFTER_MS + 1, new Set(['w1']))).toBe('offline');
    expect(effectiveStatus(entry(), now + 1000, new Set(['other']))).toBe('offline');
    expect(effectiveStatus(entry({ status: 'offline' }), now, new Set(['w1']))).toBe('offline');
    expect(effectiveStatus(entry({ last_heartbeat: 'garbage' }), now, undefined)).toBe('offline');
  });

  it('an offline worker shows no current task', () => {
    expect(workerView(entry(), 'offline')).toMatchObject({ status: 'offline', current_task: null, current_tasks: [] });
    expect(workerView(entry(), 'busy')).toEqual({
      id: 'w1', hostname: 'h', status: 'busy', current_task: 't1', current_tasks: ['t1'], concurrency: 1, joined_at: 'j',
      last_heartbeat: entry().last_heartbeat, tasks_complete: 3, tasks_failed: 1, draining: false,
      workflows: [], tools: [], labels: [], refused: [],
    });
    expect(workerView(entry({ workflows: ['a'], tools: ['nuclei'], labels: ['gpu'] }), 'idle')).toMatchObject({ workflows: ['a'], tools: ['nuclei'], labels: ['gpu'] });
  });

  it('task status from BullMQ state', () => {
    expect(['active', 'completed', 'failed', 'waiting', 'prioritized', 'delayed'].map(taskStatusOf)).toEqual(['running', 'completed', 'failed', 'waiting', 'waiting', 'waiting']);
  });
});

describe('routing', () => {
  const w = (over: Record<string, unknown> = {}) => ({ status: 'idle' as const, draining: false, workflows: ['scan'], tools: ['nuclei'], labels: ['gpu=a100'], ...over });
  const task = (tools: string[] = [], labels: string[] = []) => ({ workflow_name: 'scan', requires: { tools, labels } });

  it('labels: a name matches the name and name=value; key=value only itself', () => {
    expect(labelMatches('gpu', ['gpu'])).toBe(true);
    expect(labelMatches('gpu', ['gpu=a100'])).toBe(true);
    expect(labelMatches('gpu=a100', ['gpu=a100'])).toBe(true);
    expect(labelMatches('gpu=h100', ['gpu=a100'])).toBe(false);
    expect(labelMatches('gp', ['gpu'])).toBe(false);
  });

  it('--label values are checked and deduplicated', () => {
    expect(parseWorkerLabels(['region=eu', 'gpu', 'gpu'])).toEqual(['gpu', 'region=eu']);
    expect(() => parseWorkerLabels(['bad label'])).toThrow('invalid --label');
    expect(() => parseWorkerLabels(['a=b=c;rm'])).toThrow('invalid --label');
  });

  it('the waiting reason names the first unmet requirement among online workers', () => {
    expect(waitingReason(task(), [])).toBe('no worker online');
    expect(waitingReason(task(), [w({ status: 'offline' })])).toBe('no worker online');
    expect(waitingReason(task(), [w({ draining: true })])).toBe('every online worker is draining');
    expect(waitingReason(task(), [w({ workflows: ['other'] })])).toBe('no online worker has workflow scan');
    expect(waitingReason(task(['nuclei', 'httpx']), [w()])).toBe('needs tools: httpx');
    expect(waitingReason(task([], ['region=eu']), [w()])).toBe('needs labels: region=eu');
    expect(waitingReason(task(['nuclei'], ['gpu']), [w({ workflows: ['other'] }), w()])).toBeUndefined();
  });

  it('job data of an older master has no requirements; the schema defaults them', () => {
    expect(needsOf({ workflow_name: 'scan' })).toEqual({ workflow_name: 'scan', requires: { tools: [], labels: [] } });
    expect(needsOf(null)).toBeUndefined();
  });
});

describe('routing check on the worker (its real folder and PATH)', () => {
  it('names the missing workflow, kind, tool (own copy or task) or label; a queued path is never probed', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const { createAppContext } = await import('../../src/services/context.js');
    const { unmetRequirement } = await import('../../src/distributed/routing.js');
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    const wf = path.join(base, 'wf');
    fs.mkdirSync(wf);
    fs.writeFileSync(path.join(wf, 'tooly.yaml'), 'kind: module\nname: tooly\ndependencies:\n  commands: [osm-no-such-tool-1]\nsteps:\n  - name: a\n    type: bash\n    command: echo a\n');
    fs.writeFileSync(path.join(wf, 'plain.yaml'), 'kind: module\nname: plain\nsteps:\n  - name: a\n    type: bash\n    command: echo a\n');
    const app = createAppContext({ baseFolder: base, workflowFolder: wf });
    try {
      const data = (name: string, tools: string[] = [], labels: string[] = [], kind: 'flow' | 'module' = 'module') =>
        taskDataSchema.parse({ v: PROTOCOL_VERSION, run_uuid: '0b6f3c1e-8f5e-4a51-9a0c-2f4f3f7b1a11', workflow_name: name, workflow_kind: kind, target: 'a.com', submitted_at: 'x', requires: { tools, labels } });
      expect(unmetRequirement(app, data('missing'), [])).toBe('no workflow missing');
      expect(unmetRequirement(app, data('plain', [], [], 'flow'), [])).toBe('workflow plain is a module here, the task expects a flow');
      expect(unmetRequirement(app, data('tooly'), [])).toBe('needs tools: osm-no-such-tool-1');
      expect(unmetRequirement(app, data('plain', ['osm-no-such-tool-2', 'sh'], []), [])).toBe('needs tools: osm-no-such-tool-2');
      expect(unmetRequirement(app, data('plain', ['/nonexistent/x'], []), [])).toBeUndefined();
      expect(unmetRequirement(app, data('plain', ['sh'], ['gpu']), ['region=eu'])).toBe('needs labels: gpu');
      expect(unmetRequirement(app, data('plain', ['sh'], ['gpu']), ['gpu=a100'])).toBeUndefined();
    } finally {
      app.close();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('shipped file records', () => {
  const rec = (over: Record<string, unknown>) => ({ v: PROTOCOL_VERSION, kind: 'file', run_uuid: '7f0c1c3e-2a51-4a8e-9d1e-0b6f5e2f4a10', worker_id: 'w', at: '2026-11-26T10:00:00Z', workspace: 'example.com', path: 'logs/x/output.journal', offset: 0, data: '', eof: true, ...over });

  it('accepts only relative, normalized paths of safe names', () => {
    for (const ok of ['a', 'found/hosts.txt', 'logs/7f0c/output.journal', '.hidden/x', 'a..b/c']) expect(isShippablePath(ok), ok).toBe(true);
    for (const bad of ['', '/etc/passwd', '../x', 'a/../../x', './x', 'a/./x', 'a//x', 'a/', '/', '..', '.', 'a\\b', 'a b', 'a\0b', 'é', `${'d/'.repeat(32)}x`, 'x'.repeat(256)]) {
      expect(isShippablePath(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('the schema refuses bad paths, chunks over 256 KB and data that is not base64', () => {
    expect(fileRecordSchema.safeParse(rec({ data: Buffer.alloc(FILE_CHUNK_BYTES).toString('base64') })).success).toBe(true);
    expect(fileRecordSchema.safeParse(rec({ data: Buffer.alloc(FILE_CHUNK_BYTES + 1).toString('base64') })).success).toBe(false);
    expect(fileRecordSchema.safeParse(rec({ data: 'not base64!' })).success).toBe(false);
    // Canonical base64 only: whole quads, padding at the end and at most two of it.
    for (const data of ['', 'QQ==', 'QUI=', 'QUJD']) expect(fileRecordSchema.safeParse(rec({ data })).success, data).toBe(true);
    for (const data of ['QQ', 'Q===', 'QQ=A', '====', 'QU JD', 'QUJD\n']) expect(fileRecordSchema.safeParse(rec({ data })).success, data).toBe(false);
    expect(fileRecordSchema.safeParse(rec({ path: '../x' })).success).toBe(false);
    expect(fileRecordSchema.safeParse(rec({ offset: -1 })).success).toBe(false);
  });
});
