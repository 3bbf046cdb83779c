/**
 * Issue 15, "results in one place" (files): the log folder and the artifact files of a run executed
 * on a worker reach the master through the durable records stream (fenced `file` records), so the
 * master's GET /runs/{id}/logs and artifact downloads serve them; live lines arrive while the run
 * executes; a replayed record changes nothing; forged records are refused and write nothing
 * outside the run's workspace folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../helpers/cli.js';
import { editSettingsFile, startS3 } from '../helpers/s3.js';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { createAppContext, type SqliteAppContext as AppContext } from '../../src/services/context.js';
import { attachMaster, detachMaster } from '../../src/distributed/attach.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { DistributedWorker } from '../../src/distributed/worker.js';
import { applyFileRecord } from '../../src/distributed/files-apply.js';
import { FILE_CHUNK_BYTES, recordsKey } from '../../src/distributed/records.js';
import { PROTOCOL_VERSION } from '../../src/distributed/protocol.js';
import { connectionOptions, resolveDistributedConfig, type DistributedConfig } from '../../src/distributed/redis-config.js';
import { QUEUE_NAME } from '../../src/distributed/keys.js';
import { analyzeTarget } from '../../src/workflow/heuristics.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix, until } from './helpers.js';

const hasRedis = await redisAvailable();
const s3 = hasRedis ? await startS3() : null;

describe.skipIf(!hasRedis)('files of a distributed run reach the master', () => {
  const prefix = testPrefix();
  const dirs: string[] = [];
  const inProcess: { worker: DistributedWorker; app: AppContext }[] = [];
  let wfDir: string;
  let t: SqliteTestServer;
  let master: DistributedMaster;
  let config: DistributedConfig;
  let redis: Redis;
  let url: string;

  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    dirs.push(d);
    return d;
  };
  const api = (method: 'GET' | 'POST', url: string, payload?: object) => t.server.inject({ method, url, headers: t.auth, ...(payload ? { payload } : {}) });

  async function startWorker(name: string): Promise<{ worker: DistributedWorker; app: AppContext }> {
    const app = createAppContext({ baseFolder: tmp(), workflowFolder: wfDir });
    const worker = new DistributedWorker(app, { config, name, lockDurationMs: 3000, stalledIntervalMs: 500, maxStalledCount: 1 });
    inProcess.push({ worker, app });
    await worker.start();
    return { worker, app };
  }

  async function startMaster(): Promise<void> {
    master = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 500, recordsMs: 200 });
    await master.start();
    attachMaster(t.app, master);
  }

  const waitCompleted = (uuid: string) => until(() => (t.app.store.runs.getByUuid(uuid)?.status === 'completed' ? t.app.store.runs.getByUuid(uuid) : undefined), `run ${uuid} completed on the master`);
  const streamEmpty = () => until(async () => (await redis.xlen(recordsKey(prefix))) === 0, 'the records stream to be applied');

  /** Adds a record to the stream as a worker would (the fencing script aside: the master is the second line). */
  const forge = (attempt: number, rec: Record<string, unknown>) => redis.xadd(recordsKey(prefix), '*', 'attempt', String(attempt), 'rec', JSON.stringify(rec));

  beforeAll(async () => {
    wfDir = tmp();
    fs.mkdirSync(path.join(wfDir, 'modules'), { recursive: true });
    fs.writeFileSync(
      path.join(wfDir, 'modules', 'writer.yaml'),
      [
        'kind: module', 'name: writer', 'description: writes a report and log lines',
        'params:', '  - name: gate', '    default: ""',
        'reports:', '  - name: found', '    path: "{{Output}}/found/hosts.txt"', '    type: text',
        'steps:',
        '  - name: produce', '    type: bash',
        '    command: mkdir -p "{{Output}}/found" && printf \'ARTIFACT {{Target}}\\n\' > "{{Output}}/found/hosts.txt" && echo "early line {{Target}}"',
        '  - name: wait', '    type: bash',
        '    command: if [ -n "{{gate}}" ]; then while [ ! -e "{{gate}}" ]; do sleep 0.1; done; fi; echo "late line {{Target}}"', '',
      ].join('\n'),
    );
    t = await makeSqliteTestServer({ workflowFolder: wfDir });
    config = resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix });
    await startMaster();
    redis = new Redis(REDIS_URL);
    url = await t.server.listen({ port: 0, host: '127.0.0.1' });
  });

  afterEach(async () => {
    for (const { worker, app } of inProcess.splice(0)) {
      await worker.stop();
      app.close();
    }
  });

  afterAll(async () => {
    detachMaster(t.app);
    await master?.stop();
    await t?.close();
    redis?.disconnect();
    await dropPrefix(prefix);
    await s3?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  let done: { uuid: string; workspace: string; artifact: string } | undefined;

  it('the log lines and the artifact file of a run on a worker are served by the master; live lines arrive while it runs', async () => {
    const { app: wapp } = await startWorker('w-files');
    const gate = path.join(tmp(), 'go');
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'writer', target: 'files.example.com', params: { gate } });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;

    // While the run waits on its gate (on the worker), its first step's line is readable on the master.
    const live = await until(async () => {
      const r = await api('GET', `/osm/api/runs/${uuid}/logs`);
      return r.statusCode === 200 && r.body.includes('early line files.example.com') ? r.body : undefined;
    }, 'the early line on the master while the run executes');
    expect(live).not.toContain('late line');
    expect(t.app.store.runs.getByUuid(uuid)?.status).toBe('running');
    // `osm logs -f --server <master>` follows it (SSE) until the run ends on the worker.
    let followed = '';
    const following = runOsm(['logs', '-f', '--server', url, '--api-key', t.apiKey, uuid], { onSpawn: (c) => c.stdout!.on('data', (d) => (followed += d)) });
    await until(() => followed.includes('early line files.example.com'), 'osm logs -f to print the early line');
    fs.writeFileSync(gate, '');
    const follow = await following;
    expect(follow.code, follow.stderr).toBe(0);
    expect(follow.stdout).toContain('late line files.example.com');

    const run = await waitCompleted(uuid);
    const logs = await api('GET', `/osm/api/runs/${uuid}/logs`);
    expect(logs.statusCode).toBe(200);
    expect(logs.body.split('\n').filter(Boolean)).toEqual(['early line files.example.com', 'late line files.example.com']);
    const jsonl = await api('GET', `/osm/api/runs/${uuid}/logs?format=jsonl`);
    const events = jsonl.body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event: string; step?: string; status?: string });
    expect(events.filter((e) => e.event === 'step' && e.status === 'completed').map((e) => e.step)).toEqual(['produce', 'wait']);
    expect(events.at(-1)).toEqual({ event: 'end', status: 'completed' });

    // The artifact row points at the master's copy, and the download serves the worker's bytes.
    const masterRoot = path.join(path.resolve(t.app.settings().paths.workspaces), run.workspace);
    const rows = t.app.store.artifacts.listByRun(run.id);
    const report = rows.find((a) => a.name === 'found');
    expect(report?.artifact_path).toBe(path.join(masterRoot, 'found', 'hosts.txt'));
    const workerRoot = path.join(path.resolve(wapp.settings().paths.workspaces), run.workspace);
    const workerBytes = fs.readFileSync(path.join(workerRoot, 'found', 'hosts.txt'));
    expect(workerBytes.toString()).toBe('ARTIFACT files.example.com\n');
    const dl = await api('GET', `/osm/api/artifacts/${run.workspace}?artifact_path=${encodeURIComponent(report!.artifact_path)}`);
    expect(dl.statusCode, dl.body).toBe(200);
    expect(dl.rawPayload.equals(workerBytes)).toBe(true);
    // Every state file registered as an artifact is on the master too, byte for byte (the
    // execution log's lines are appended once the end is committed: waited for).
    const execLog = path.join(masterRoot, 'run-execution.log');
    await until(() => fs.existsSync(execLog) && fs.readFileSync(execLog).equals(fs.readFileSync(path.join(workerRoot, 'run-execution.log'))), 'the run-execution.log lines on the master');
    for (const a of rows.filter((r) => r.artifact_type === 'state_file')) {
      expect(a.artifact_path.startsWith(masterRoot + path.sep)).toBe(true);
      expect(fs.readFileSync(a.artifact_path).equals(fs.readFileSync(path.join(workerRoot, path.relative(masterRoot, a.artifact_path))))).toBe(true);
    }
    // The log folder is the worker's, byte for byte.
    const logDir = path.join('logs', uuid);
    for (const name of fs.readdirSync(path.join(workerRoot, logDir))) {
      expect(fs.readFileSync(path.join(masterRoot, logDir, name)).equals(fs.readFileSync(path.join(workerRoot, logDir, name))), name).toBe(true);
    }
    // `osm logs` on the master's base folder reads the same files.
    const cli = await runOsm(['-b', t.base, 'logs', uuid]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('early line files.example.com');
    expect(cli.stdout).toContain('late line files.example.com');
    done = { uuid, workspace: run.workspace, artifact: report!.artifact_path };
  });

  it('replayed file records (a master down while the worker finished, then the same records again) duplicate nothing', async () => {
    detachMaster(t.app);
    await master.stop();
    const producer = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 60_000, recordsMs: 60_000 });
    await producer.start();
    const r = t.app.store.runs.create({ workflow_name: 'writer', workflow_kind: 'module', target: 'replay.example.com', status: 'queued', workspace: analyzeTarget('replay.example.com', { level: 'basic' }).targetSpace, trigger_type: 'api', run_mode: 'distributed', priority: 'normal', params: {} });
    await producer.submit([r]);
    await producer.stop();
    await startWorker('w-replay');
    await until(async () => (await redis.xrange(recordsKey(prefix), '-', '+')).some(([, f]) => f.join().includes('"kind":"end"') && f.join().includes(r.run_uuid)), 'the end record');
    const recorded = (await redis.xrange(recordsKey(prefix), '-', '+')).filter(([, f]) => f.join().includes('"kind":"file"'));
    expect(recorded.length).toBeGreaterThan(0);

    await startMaster();
    const run = await waitCompleted(r.run_uuid);
    await streamEmpty();
    const masterRoot = path.join(path.resolve(t.app.settings().paths.workspaces), run.workspace);
    const snapshot = () => {
      const out: Record<string, string> = {};
      const walk = (dir: string) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
          const p = path.join(dir, e.name);
          if (e.isDirectory()) walk(p);
          else out[path.relative(masterRoot, p)] = fs.readFileSync(p, 'base64');
        }
      };
      walk(masterRoot);
      return out;
    };
    const before = snapshot();
    expect(Object.keys(before)).toContain(path.join('found', 'hosts.txt'));
    const linesBefore = (await api('GET', `/osm/api/runs/${r.run_uuid}/logs`)).body;
    expect(linesBefore.split('\n').filter(Boolean)).toEqual(['early line replay.example.com', 'late line replay.example.com']);

    for (const [, fields] of recorded) await redis.xadd(recordsKey(prefix), '*', ...fields);
    await streamEmpty();
    expect(snapshot()).toEqual(before);
    expect((await api('GET', `/osm/api/runs/${r.run_uuid}/logs`)).body).toBe(linesBefore);
    expect(t.app.store.artifacts.listByRun(run.id).filter((a) => a.name === 'found')).toHaveLength(1);
  });

  it("the runs of one workspace on two workers: the master's run-execution.log holds each run's lines once; the file itself never travels", async () => {
    const workers = [await startWorker('w-log-a'), await startWorker('w-log-b')];
    const target = 'shared-log.test';
    const uuids: string[] = [];
    // The first run holds one worker (it waits on a gate): the other executes the next five.
    const gate = path.join(tmp(), 'go');
    const submit = async (params: Record<string, string>) => {
      const res = await api('POST', '/osm/api/tasks', { workflow_name: 'writer', target, params });
      expect(res.statusCode, res.body).toBe(202);
      uuids.push(res.json().run_uuid as string);
    };
    await submit({ gate });
    await until(() => t.app.store.runs.getByUuid(uuids[0]!)?.status === 'running', 'the gated run to start');
    for (let i = 0; i < 5; i++) await submit({});
    const runs = [];
    for (const uuid of uuids.slice(1)) runs.push(await waitCompleted(uuid));
    fs.writeFileSync(gate, '');
    runs.push(await waitCompleted(uuids[0]!));
    await streamEmpty();
    const workspace = runs[0]!.workspace;
    const started = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { message: string; run_uuid?: string })
        .filter((l) => l.message === 'Run started')
        .map((l) => l.run_uuid!);
    const masterLog = path.join(path.resolve(t.app.settings().paths.workspaces), workspace, 'run-execution.log');
    await until(() => fs.existsSync(masterLog) && started(fs.readFileSync(masterLog, 'utf8')).length === uuids.length, 'the six runs in the master\'s execution log');
    const text = fs.readFileSync(masterLog, 'utf8');
    expect(started(text).sort()).toEqual([...uuids].sort());
    // Two steps per run, each started and completed once.
    const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { message: string });
    expect(lines.filter((l) => l.message === 'Executing step')).toHaveLength(2 * uuids.length);
    expect(lines.filter((l) => l.message === 'Step completed')).toHaveLength(2 * uuids.length);
    // Each worker's own file holds only the runs it executed (both took some).
    const byWorker = workers.map(({ app }) => started(fs.readFileSync(path.join(path.resolve(app.settings().paths.workspaces), workspace, 'run-execution.log'), 'utf8')));
    expect(byWorker.every((w) => w.length > 0 && w.length < uuids.length)).toBe(true);
    expect([...byWorker[0]!, ...byWorker[1]!].sort()).toEqual([...uuids].sort());
    // The artifact row names the master's file.
    for (const run of runs) expect(t.app.store.artifacts.listByRun(run.id).find((a) => a.name === 'state-execution-log')?.artifact_path).toBe(masterLog);
    // No record carried the file itself.
    const fileRecords = (await redis.xrange(recordsKey(prefix), '-', '+')).filter(([, f]) => f.join().includes('run-execution.log'));
    expect(fileRecords).toEqual([]);
    // The jobs' return values (kept in Redis with the job and its event) leave the lines out.
    const queue = new Queue(QUEUE_NAME, { connection: connectionOptions(config.redis), prefix });
    try {
      const job = await Job.fromId(queue, uuids[1]!);
      expect(job?.returnvalue).toMatchObject({ worker_id: expect.stringMatching(/^w-log-/), run: { status: 'completed' } });
      expect(job?.returnvalue).not.toHaveProperty('execution_log');
    } finally {
      await queue.close();
    }
  });

  it("a master's run-execution.log that is a symlink is not written through; the run is recorded", async () => {
    await startWorker('w-log-link');
    const target = 'linked-log.test';
    const workspace = analyzeTarget(target, { level: 'basic' }).targetSpace;
    const masterRoot = path.join(path.resolve(t.app.settings().paths.workspaces), workspace);
    fs.mkdirSync(masterRoot, { recursive: true });
    const outside = path.join(tmp(), 'victim.log');
    fs.writeFileSync(outside, 'KEEP\n');
    fs.symlinkSync(outside, path.join(masterRoot, 'run-execution.log'));
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'writer', target });
    expect(res.statusCode, res.body).toBe(202);
    const run = await waitCompleted(res.json().run_uuid as string);
    await streamEmpty();
    expect(run.status).toBe('completed');
    expect(fs.readFileSync(outside, 'utf8')).toBe('KEEP\n');
    expect(fs.lstatSync(path.join(masterRoot, 'run-execution.log')).isSymbolicLink()).toBe(true);
  });

  it('forged file records (climbing, absolute, through a symlink, oversize, other workspace, superseded) are refused and write nothing', async () => {
    expect(done).toBeDefined();
    const { uuid, workspace } = done!;
    const attempt = t.app.store.attempts.latest(uuid);
    expect(attempt).toBeGreaterThan(0);
    const masterRoot = path.join(path.resolve(t.app.settings().paths.workspaces), workspace);
    const outside = tmp();
    fs.symlinkSync(outside, path.join(masterRoot, 'evil-link'));
    const wsParent = path.dirname(masterRoot);
    const before = fs.readdirSync(wsParent).sort();
    const artifactBefore = fs.readFileSync(done!.artifact);
    const base = { v: PROTOCOL_VERSION as typeof PROTOCOL_VERSION, kind: 'file' as const, run_uuid: uuid, worker_id: 'forger', at: new Date().toISOString(), workspace, offset: 0, eof: true };
    const data = Buffer.from('PWNED\n').toString('base64');
    const forged: [number, Record<string, unknown>][] = [
      [attempt, { ...base, path: '../x', data }],
      [attempt, { ...base, path: 'logs/../../x', data }],
      [attempt, { ...base, path: `${outside}/x`, data }],
      [attempt, { ...base, path: './x', data }],
      [attempt, { ...base, path: 'a//x', data }],
      [attempt, { ...base, path: 'evil-link/x', data }],
      [attempt, { ...base, path: 'evil-link', data }],
      [attempt, { ...base, path: 'too-big', data: Buffer.alloc(FILE_CHUNK_BYTES + 1).toString('base64') }],
      [attempt, { ...base, path: 'beyond-cap', offset: 256 * 1024 * 1024, data }],
      [attempt, { ...base, workspace: '..', path: 'x', data }],
      [attempt, { ...base, workspace: 'other-ws', path: 'x', data }],
    ];
    for (const [n, rec] of forged) await forge(n, rec);
    await streamEmpty();

    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readdirSync(wsParent).sort()).toEqual(before);
    // A chunk of an attempt older than the latest the master knows is dropped.
    const run = t.app.store.runs.getByUuid(uuid)!;
    expect(await applyFileRecord(t.app, run, { ...base, path: 'superseded', data, attempt }, attempt + 1)).toBeUndefined();
    for (const name of ['x', 'too-big', 'beyond-cap', 'superseded']) expect(fs.existsSync(path.join(masterRoot, name)), name).toBe(false);
    expect(fs.lstatSync(path.join(masterRoot, 'evil-link')).isSymbolicLink()).toBe(true);
    expect(fs.existsSync(path.join(wsParent, 'x'))).toBe(false);
    expect(t.app.store.workspaces.get('other-ws')).toBeUndefined();
    // The genuine artifact is untouched and a well-formed record of the latest attempt is applied.
    expect(fs.readFileSync(done!.artifact).equals(artifactBefore)).toBe(true);
    await forge(attempt, { ...base, path: 'found/extra.txt', data });
    await streamEmpty();
    expect(fs.readFileSync(path.join(masterRoot, 'found', 'extra.txt'), 'utf8')).toBe('PWNED\n');
  });

  it('a chunk the master cannot write (its folder cannot be made) is refused, not retried: the records after it are applied', async () => {
    expect(done).toBeDefined();
    // The workspace row names a folder below a regular file: every mkdir there fails (ENOTDIR).
    const blocker = path.join(tmp(), 'a-file');
    fs.writeFileSync(blocker, 'x');
    t.app.store.workspaces.upsertRunInfo({ name: 'stuck-ws', local_path: path.join(blocker, 'sub') });
    const r = t.app.store.runs.create({ workflow_name: 'writer', workflow_kind: 'module', target: 'stuck', status: 'queued', workspace: 'stuck-ws', trigger_type: 'api', run_mode: 'distributed', priority: 'normal', params: {} });
    const base = { v: PROTOCOL_VERSION as typeof PROTOCOL_VERSION, kind: 'file' as const, worker_id: 'w', at: new Date().toISOString(), eof: false };
    const data = Buffer.from('12345').toString('base64');
    await forge(1, { ...base, run_uuid: r.run_uuid, workspace: 'stuck-ws', path: 'logs/a.log', offset: 0, data });
    await forge(1, { ...base, run_uuid: r.run_uuid, workspace: 'stuck-ws', path: 'logs/a.log', offset: 5, data });
    // A record of another run, after them: applied.
    const attempt = t.app.store.attempts.latest(done!.uuid);
    await forge(attempt, { ...base, run_uuid: done!.uuid, workspace: done!.workspace, path: 'found/after-stuck.txt', offset: 0, data, eof: true });
    await streamEmpty();
    const masterRoot = path.join(path.resolve(t.app.settings().paths.workspaces), done!.workspace);
    expect(fs.readFileSync(path.join(masterRoot, 'found', 'after-stuck.txt'), 'utf8')).toBe('12345');
    expect(fs.readFileSync(blocker, 'utf8')).toBe('x');
  });

  it('over distributed.ship_files_max_mb the files stay on the worker, with a visible note', async () => {
    const { app: wapp } = await startWorker('w-capped');
    wapp.settings().settings.distributed.ship_files_max_mb = 0;
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'writer', target: 'capped.example.org' });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;
    const run = await waitCompleted(uuid);
    await streamEmpty();
    const masterRoot = path.join(path.resolve(t.app.settings().paths.workspaces), run.workspace);
    expect(fs.existsSync(path.join(masterRoot, 'logs', uuid))).toBe(false);
    expect(fs.existsSync(path.join(masterRoot, 'found', 'hosts.txt'))).toBe(false);
    const report = t.app.store.artifacts.listByRun(run.id).find((a) => a.name === 'found')!;
    const workerFile = path.join(path.resolve(wapp.settings().paths.workspaces), run.workspace, 'found', 'hosts.txt');
    expect(report.artifact_path).toBe(workerFile);
    expect(report.description).toContain(`[not shipped to the master (over distributed.ship_files_max_mb); on worker w-capped at ${workerFile}]`);
    const notes = t.app.store.events.list({ run_id: uuid }, { offset: 0, limit: 100 }).data.filter((e) => e.topic === 'run.files_truncated');
    expect(notes).toHaveLength(1);
    const data = JSON.parse(notes[0]!.data) as { worker_id: string; cap_bytes: number; shipped_bytes: number; left_on_worker: string[] };
    expect(data).toMatchObject({ worker_id: 'w-capped', cap_bytes: 0, shipped_bytes: 0 });
    expect(data.left_on_worker).toContain(`logs/${uuid}/output.journal`);
    expect(data.left_on_worker).toContain('found/hosts.txt');
  });

  it.skipIf(!s3)('with object storage the artifacts travel as references: the master serves them from the bucket, logs still arrive', async () => {
    const fx = s3!;
    const { app: wapp } = await startWorker('w-stored');
    await editSettingsFile(wapp.settings().file, { ...fx.storage, upload_outputs: true });
    wapp.manager.reload();
    await editSettingsFile(t.app.settings().file, fx.storage);
    t.app.manager.reload();
    const target = 'stored.example.net';
    const workspace = analyzeTarget(target, { level: 'basic' }).targetSpace;
    // A stale copy of an earlier run on the master must not shadow the stored file.
    const masterRoot = path.join(path.resolve(t.app.settings().paths.workspaces), workspace);
    fs.mkdirSync(path.join(masterRoot, 'found'), { recursive: true });
    fs.writeFileSync(path.join(masterRoot, 'found', 'hosts.txt'), 'STALE\n');

    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'writer', target });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;
    const run = await waitCompleted(uuid);
    await streamEmpty();
    expect(run.workspace).toBe(workspace);
    expect(t.app.store.events.list({ run_id: uuid }, { offset: 0, limit: 100 }).data.some((e) => e.topic === 'storage.uploaded')).toBe(true);
    const report = t.app.store.artifacts.listByRun(run.id).find((a) => a.name === 'found')!;
    expect(report.artifact_path).toBe(path.join(masterRoot, 'found', 'hosts.txt'));
    expect(fs.existsSync(report.artifact_path)).toBe(false);
    const dl = await api('GET', `/osm/api/artifacts/${workspace}?artifact_path=${encodeURIComponent(report.artifact_path)}`);
    expect(dl.statusCode, dl.body).toBe(200);
    expect(dl.body).toBe(`ARTIFACT ${target}\n`);
    const logs = await api('GET', `/osm/api/runs/${uuid}/logs`);
    expect(logs.body.split('\n').filter(Boolean)).toEqual([`early line ${target}`, `late line ${target}`]);
  });
});
