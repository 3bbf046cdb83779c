import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { openSse, type SseEvent } from '../helpers/sse.js';
import { openStreamCount, STREAM_TIMING } from '../../src/server/sse.js';
import { eventStreamListeners } from '../../src/services/event-stream.js';
import { liveRunOutput } from '../../src/engine/live/run-output.js';
import { createToken } from '../../src/services/tokens.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'live');
const { dir, cleanup } = tempDir('osm-logs-');
let t: TestServer;
let url: string;

beforeAll(async () => {
  const wf = join(dir, 'wf');
  mkdirSync(wf, { recursive: true });
  copyFileSync(join(FIXTURES, 'live-gate.yaml'), join(wf, 'live-gate.yaml'));
  t = await makeTestServer({ withQueue: true, workflowFolder: wf });
  await t.server.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.server.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await t.close();
  cleanup();
});

async function startGated(name: string, target = `${name}.example.com`): Promise<{ uuid: string; gate: string }> {
  const gate = join(dir, `${name}.gate`);
  const res = await fetch(`${url}/osm/api/runs`, { method: 'POST', headers: { ...t.auth, 'content-type': 'application/json' }, body: JSON.stringify({ module: 'live-gate', target, params: { gate } }) });
  expect(res.status).toBe(202);
  const body = (await res.json()) as { run_uuid: string };
  return { uuid: body.run_uuid, gate };
}

const data = (e: SseEvent) => JSON.parse(e.data) as Record<string, unknown>;
const lineOf = (e: SseEvent) => (e.event === 'line' ? String(data(e).line) : undefined);

/** Starts a gated run and waits until both of its early lines (stdout and stderr: their order is the pipes') were streamed. */
async function startPastEarlyLines(name: string): Promise<{ uuid: string; gate: string; seen: SseEvent[]; sse: Awaited<ReturnType<typeof openSse>> }> {
  const { uuid, gate } = await startGated(name);
  const sse = await openSse(`${url}/osm/api/runs/${uuid}/logs`, t.auth);
  const seen: SseEvent[] = [];
  const want = new Set(['first-line', 'err-line']);
  while (want.size) {
    const e = await sse.next();
    if (!e) throw new Error('stream ended early');
    seen.push(e);
    want.delete(lineOf(e) ?? '');
  }
  return { uuid, gate, seen, sse };
}

async function waitFor<T>(fn: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('GET /runs/{id}/logs as Server-Sent Events', () => {
  it('delivers a line while its step is still running, resumes exactly after Last-Event-ID, and ends with the status', async () => {
    // The step cannot end before the gate exists, and the gate is only created after its first lines arrived.
    const { uuid, gate, seen: first, sse } = await startPastEarlyLines('sse');
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    const firstLine = first[first.length - 1]!;
    expect(first.filter((e) => e.event === 'line').map((e) => [data(e).line, data(e).stream]).sort()).toEqual([
      ['err-line', 'stderr'],
      ['first-line', 'stdout'],
    ]);
    expect(data(firstLine)).toMatchObject({ step: 'talk' });
    expect(new Date(String(data(firstLine).ts)).toISOString()).toBe(data(firstLine).ts);
    expect(first.some((e) => e.event === 'step' && data(e).step === 'talk' && data(e).status === 'running')).toBe(true);
    const run = (await t.app.repos.runs.getByUuid(uuid))!;
    expect(run.status).toBe('running');
    expect((await t.app.repos.steps.listByRun(run.id)).find((s) => s.step_name === 'talk')?.status).toBe('running');
    // current_pid is the running command (a process whose command line is the step's), while it runs.
    const pid = await waitFor(async () => (await t.app.repos.runs.getByUuid(uuid))!.current_pid || undefined, 'current_pid');
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('first-line');

    writeFileSync(gate, '');
    const rest = await sse.rest();
    const lines = rest.map(lineOf).filter((l) => l !== undefined);
    expect(lines).toEqual(['second-line', 'after-line']);
    expect(rest.filter((e) => e.event === 'step').map((e) => [data(e).step, data(e).status])).toEqual([
      ['talk', 'completed'],
      ['after', 'running'],
      ['after', 'completed'],
    ]);
    const talkDone = rest.find((e) => e.event === 'step' && data(e).step === 'talk' && data(e).status === 'completed')!;
    expect(data(talkDone)).toMatchObject({ exit_code: 0 });
    expect(typeof data(talkDone).duration_ms).toBe('number');
    const end = rest[rest.length - 1]!;
    expect(end.event).toBe('end');
    expect(data(end)).toEqual({ status: 'completed' });
    expect((await t.app.repos.runs.getByUuid(uuid))!.current_pid).toBe(0);

    // Ids grow by one per line or step change; a reconnect after the first line gets exactly the rest.
    const all = [...first, ...rest].filter((e) => e.id !== undefined);
    const ids = all.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
    const again = await openSse(`${url}/osm/api/runs/${uuid}/logs`, { ...t.auth, 'last-event-id': firstLine.id! });
    const resumed = await again.rest();
    expect(resumed.map((e) => `${e.id ?? ''}|${e.event}|${e.data}`)).toEqual(rest.map((e) => `${e.id ?? ''}|${e.event}|${e.data}`));
  });

  it('serves the output so far as text, JSON lines, one step, and the last N lines', async () => {
    const { uuid, gate, sse: follower } = await startPastEarlyLines('plain');
    follower.close();
    writeFileSync(gate, '');
    await waitFor(async () => ((await t.app.repos.runs.getByUuid(uuid))!.status === 'completed' ? true : undefined), 'run end');
    const get = (q: string) => fetch(`${url}/osm/api/runs/${uuid}/logs${q}`, { headers: t.auth });

    const text = await get('');
    expect(text.headers.get('content-type')).toContain('text/plain');
    const shown = (await text.text()).split('\n');
    expect(shown.slice(0, 2).sort()).toEqual(['err-line', 'first-line']);
    expect(shown.slice(2)).toEqual(['second-line', 'after-line', '']);

    const jsonl = await get('?format=jsonl');
    expect(jsonl.headers.get('content-type')).toContain('application/x-ndjson');
    const rows = (await jsonl.text()).trim().split('\n').map((l) => JSON.parse(l));
    const lineRows = rows.filter((r) => r.event === 'line').map((r) => [r.step, r.stream, r.line]);
    expect(lineRows.slice(0, 2).sort()).toEqual([
      ['talk', 'stderr', 'err-line'],
      ['talk', 'stdout', 'first-line'],
    ]);
    expect(lineRows.slice(2)).toEqual([
      ['talk', 'stdout', 'second-line'],
      ['after', 'stdout', 'after-line'],
    ]);
    expect(rows.find((r) => r.event === 'step' && r.step === 'after' && r.status === 'completed')).toMatchObject({ exit_code: 0 });
    expect(rows[rows.length - 1]).toEqual({ event: 'end', status: 'completed' });

    // The Accept header chooses JSON lines too; text/plain first keeps text; ?format= wins.
    const byAccept = (accept: string, q = '') => fetch(`${url}/osm/api/runs/${uuid}/logs${q}`, { headers: { ...t.auth, accept } });
    const ndjson = await byAccept('application/x-ndjson');
    expect(ndjson.headers.get('content-type')).toContain('application/x-ndjson');
    expect((await ndjson.text()).trim().split('\n').map((l) => JSON.parse(l))).toEqual(rows);
    expect((await byAccept('application/json')).headers.get('content-type')).toContain('application/x-ndjson');
    expect((await byAccept('text/plain, application/json')).headers.get('content-type')).toContain('text/plain');
    expect((await byAccept('*/*')).headers.get('content-type')).toContain('text/plain');
    expect((await byAccept('application/x-ndjson', '?format=text')).headers.get('content-type')).toContain('text/plain');

    expect(await (await get('?step=after')).text()).toBe('after-line\n');
    expect(await (await get('?tail=2')).text()).toBe('second-line\nafter-line\n');
    expect(await (await get('?step=talk&tail=1')).text()).toBe('second-line\n');
    expect(await (await get('?tail=0')).text()).toBe('');

    // A finished run as SSE: everything, then the end.
    const sse = await openSse(`${url}/osm/api/runs/${uuid}/logs?tail=1`, t.auth);
    const events = await sse.rest();
    expect(events.map(lineOf).filter(Boolean)).toEqual(['after-line']);
    expect(events[events.length - 1]).toMatchObject({ event: 'end' });
  });

  it('names the parallel-steps child of a line: substep in SSE and JSON lines, [child] in text; --step takes a hook or a child', async () => {
    copyFileSync(join(FIXTURES, 'live-parallel.yaml'), join(dir, 'wf', 'live-parallel.yaml'));
    await t.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh', headers: t.auth });
    const res = await fetch(`${url}/osm/api/runs`, { method: 'POST', headers: { ...t.auth, 'content-type': 'application/json' }, body: JSON.stringify({ module: 'live-parallel', target: 'par.example.com' }) });
    expect(res.status).toBe(202);
    const uuid = ((await res.json()) as { run_uuid: string }).run_uuid;
    const events = await (await openSse(`${url}/osm/api/runs/${uuid}/logs`, t.auth)).rest();
    expect(events[events.length - 1]).toMatchObject({ event: 'end', data: JSON.stringify({ status: 'completed' }) });
    const lines = events.filter((e) => e.event === 'line').map(data);
    expect(lines.find((l) => l.line === 'left-line')).toEqual({ step: 'group', substep: 'left', stream: 'stdout', line: 'left-line', ts: expect.any(String) });
    expect(lines.find((l) => l.line === 'right-line')).toMatchObject({ step: 'group', substep: 'right', stream: 'stderr' });
    // A line of a step itself (the hook) has no substep field.
    expect(lines.find((l) => l.line === 'warmup-line')).toEqual({ step: 'warmup', stream: 'stdout', line: 'warmup-line', ts: expect.any(String) });

    const get = (q: string) => fetch(`${url}/osm/api/runs/${uuid}/logs${q}`, { headers: t.auth });
    const rows = (await (await get('?format=jsonl')).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.find((r) => r.line === 'left-line')).toMatchObject({ id: expect.any(Number), event: 'line', step: 'group', substep: 'left', stream: 'stdout' });
    expect(rows.find((r) => r.line === 'warmup-line')).not.toHaveProperty('substep');
    const text = (await (await get('')).text()).split('\n');
    expect(text[0]).toBe('warmup-line');
    expect(text.slice(1, 3).sort()).toEqual(['[left] left-line', '[right] right-line']);
    // The hook has no step row but wrote lines; a child is named on its lines; the group has both.
    expect((await t.app.repos.steps.listByRun((await t.app.repos.runs.getByUuid(uuid))!.id)).map((s) => s.step_name)).toEqual(['group']);
    expect(await (await get('?step=warmup')).text()).toBe('warmup-line\n');
    expect(await (await get('?step=left')).text()).toBe('[left] left-line\n');
    expect((await (await get('?step=group')).text()).split('\n').sort()).toEqual(['', '[left] left-line', '[right] right-line']);
  });

  it('answers 404 for a step the run does not have (text, JSON lines, a finished run\'s SSE); a follower of a running run waits for a step to start', async () => {
    const { uuid, gate, sse: follower } = await startPastEarlyLines('nostep');
    follower.close();
    const get = (q: string, headers: Record<string, string> = {}) => fetch(`${url}/osm/api/runs/${uuid}/logs${q}`, { headers: { ...t.auth, ...headers } });
    // While it runs: what exists now has no such step.
    const now = await get('?step=nosuch');
    expect(now.status).toBe(404);
    expect(await now.json()).toEqual({ error: true, message: 'step not found: nosuch' });
    // A follower may ask for a step that has not started yet: it gets its lines when they come.
    const later = await openSse(`${url}/osm/api/runs/${uuid}/logs?step=after`, t.auth);
    expect(later.status).toBe(200);
    writeFileSync(gate, '');
    const got = await later.rest();
    expect(got.map(lineOf).filter(Boolean)).toEqual(['after-line']);
    expect(got[got.length - 1]).toMatchObject({ event: 'end' });
    await waitFor(async () => ((await t.app.repos.runs.getByUuid(uuid))!.status === 'completed' ? true : undefined), 'run end');
    for (const [q, headers] of [['?step=nosuch', {}], ['?step=nosuch&format=jsonl', {}], ['?step=nosuch', { accept: 'text/event-stream' }], ['?step=talk%20', {}]] as const) {
      const r = await get(q, headers);
      expect(r.status, q).toBe(404);
      expect(await r.json(), q).toEqual({ error: true, message: `step not found: ${q.includes('%20') ? 'talk ' : 'nosuch'}` });
    }
    expect(await (await get('?step=talk&tail=1')).text()).toBe('second-line\n');
  });

  it('redacts secret params in streamed lines', async () => {
    writeFileSync(join(dir, 'wf', 'leaky.yaml'), 'kind: module\nname: leaky\nparams:\n  - name: api_token\nsteps:\n  - name: leak\n    type: bash\n    command: echo "token={{api_token}}"\n');
    await t.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh', headers: t.auth });
    const res = await fetch(`${url}/osm/api/runs`, { method: 'POST', headers: { ...t.auth, 'content-type': 'application/json' }, body: JSON.stringify({ module: 'leaky', target: 'leak.example.com', params: { api_token: 'S3cretTokenValue' } }) });
    const uuid = ((await res.json()) as { run_uuid: string }).run_uuid;
    const sse = await openSse(`${url}/osm/api/runs/${uuid}/logs`, t.auth);
    const events = await sse.rest();
    const shown = events.map(lineOf).filter(Boolean);
    expect(shown).toEqual(['token=[REDACTED]']);
    expect(events.map((e) => e.data).join('')).not.toContain('S3cretTokenValue');
    // The file keeps what the tool printed.
    const run = (await t.app.repos.runs.getByUuid(uuid))!;
    const step = (await t.app.repos.steps.listByRun(run.id))[0]!;
    expect(readFileSync(step.log_file, 'utf8')).toContain('S3cretTokenValue');
  });

  it('answers 404 for an unknown run, and 401 without credentials', async () => {
    const missing = await fetch(`${url}/osm/api/runs/999999/logs`, { headers: { ...t.auth, accept: 'text/event-stream' } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: true, message: expect.stringMatching(/not found/i) });
    const anon = await fetch(`${url}/osm/api/runs/1/logs`, { headers: { accept: 'text/event-stream' } });
    expect(anon.status).toBe(401);
    expect(await anon.json()).toMatchObject({ error: true });
    const bad = await fetch(`${url}/osm/api/runs/1/logs?tail=abc`, { headers: t.auth });
    expect(bad.status).toBe(400);
  });

  it('never reads a log folder that resolves outside its workspace folder', async () => {
    const outside = join(dir, 'outside-logs');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, '0001-x.log'), 'OUTSIDE-SECRET\n');
    writeFileSync(join(outside, 'output.journal'), 'F 0 0001-x.log "x"\nL 1 0 o 0 15 1 0\n');
    const ws = join(t.app.settings().paths.workspaces, 'linked.example.com');
    mkdirSync(join(ws, 'logs'), { recursive: true });
    const run = await t.app.repos.runs.create({ workflow_name: 'live-gate', workflow_kind: 'module', target: 'linked.example.com', workspace: 'linked.example.com', status: 'queued' });
    await t.app.repos.runs.transition(run.id, 'cancelled');
    symlinkSync(outside, join(ws, 'logs', run.run_uuid));
    const res = await fetch(`${url}/osm/api/runs/${run.run_uuid}/logs?format=jsonl`, { headers: t.auth });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).not.toContain('OUTSIDE-SECRET');
    expect(body.trim()).toBe('{"event":"end","status":"cancelled"}');
  });

  it('is documented in the OpenAPI document with its media types, and HEAD only sends headers', async () => {
    const doc = (await t.server.inject({ method: 'GET', url: '/openapi.json' })).json();
    const logs = doc.paths['/osm/api/runs/{id}/logs'].get;
    expect(Object.keys(logs.responses['200'].content).sort()).toEqual(['application/x-ndjson', 'text/event-stream', 'text/plain']);
    expect(logs.description).toContain('Last-Event-ID');
    expect(logs.description).toContain('"substep"');
    expect(logs.responses['200'].content['text/event-stream'].example).toContain('"substep":"http"');
    expect(logs.responses['404'].description).toMatch(/step/);
    expect(logs.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['format', 'id', 'step', 'tail']);
    const events = doc.paths['/osm/api/events/stream'].get;
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
    const head = await fetch(`${url}/osm/api/events/stream`, { method: 'HEAD', headers: { ...t.auth, accept: 'text/event-stream' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toContain('text/event-stream');
    expect(openStreamCount(t.server)).toBe(0);
  });

  it('accepts the session cookie', async () => {
    const users = t.app.settings().settings.server.simple_user_map_key as Record<string, string>;
    const [username, password] = Object.entries(users)[0]!;
    const login = await t.server.inject({ method: 'POST', url: '/osm/api/login', payload: { username, password } });
    expect(login.statusCode).toBe(200);
    const token = login.json().token as string;
    const { uuid, gate } = await startGated('cookie');
    await waitFor(async () => ((await t.app.repos.runs.getByUuid(uuid))!.status === 'running' ? true : undefined), 'run start');
    writeFileSync(gate, '');
    const sse = await openSse(`${url}/osm/api/runs/${uuid}/logs`, { cookie: `osmedeus_session=${token}` });
    expect(sse.status).toBe(200);
    expect((await sse.rest()).map(lineOf).filter(Boolean)).toContain('after-line');
  });

  it('sends heartbeats, and ends the stream at the next one once its token is revoked', async () => {
    const made = await t.server.inject({ method: 'POST', url: '/osm/api/tokens', headers: t.auth, payload: { name: 'watcher', role: 'viewer' } });
    expect(made.statusCode).toBe(201);
    const token = made.json().data.token as string;
    const { uuid, gate } = await startGated('beat');
    const saved = STREAM_TIMING.heartbeatMs;
    STREAM_TIMING.heartbeatMs = 100;
    try {
      const sse = await openSse(`${url}/osm/api/runs/${uuid}/logs`, { 'x-osm-api-key': token });
      expect(sse.status).toBe(200);
      await sse.until((e) => lineOf(e) === 'first-line');
      await waitFor(() => (sse.comments.some((c) => c.startsWith('heartbeat')) ? true : undefined), 'a heartbeat');
      expect((await t.server.inject({ method: 'DELETE', url: '/osm/api/tokens/watcher', headers: t.auth })).statusCode).toBe(200);
      const rest = await sse.rest();
      expect(rest[rest.length - 1]).toMatchObject({ event: 'error' });
      expect(rest.some((e) => e.event === 'end')).toBe(false);
    } finally {
      STREAM_TIMING.heartbeatMs = saved;
      writeFileSync(gate, '');
    }
    await waitFor(async () => ((await t.app.repos.runs.getByUuid(uuid))!.status === 'completed' ? true : undefined), 'run end');
  });

  it('leaves no stream, watcher or listener behind after 50 connects and disconnects', async () => {
    const { uuid, gate } = await startGated('churn');
    const probe = await openSse(`${url}/osm/api/runs/${uuid}/logs`, t.auth);
    await probe.until((e) => lineOf(e) === 'first-line');
    for (let i = 0; i < 50; i++) {
      const c = await openSse(`${url}/osm/api/runs/${uuid}/logs`, t.auth);
      await c.until((e) => lineOf(e) === 'first-line');
      c.close();
      const ev = await openSse(`${url}/osm/api/events/stream`, t.auth);
      ev.close();
    }
    probe.close();
    await waitFor(() => (openStreamCount(t.server) === 0 ? true : undefined), 'streams to close');
    await waitFor(() => (eventStreamListeners(t.app) === 0 ? true : undefined), 'event listeners to go');
    await waitFor(() => (liveRunOutput(uuid)?.watcherCount === 0 ? true : undefined), 'log watchers to go');
    writeFileSync(gate, '');
    await waitFor(async () => ((await t.app.repos.runs.getByUuid(uuid))!.status === 'completed' ? true : undefined), 'run end');
  });
});

describe('GET /events/stream', () => {
  it('streams the run and step transitions of a run, and resumes after Last-Event-ID', async () => {
    const sse = await openSse(`${url}/osm/api/events/stream`, t.auth);
    expect(sse.status).toBe(200);
    const { uuid, gate } = await startGated('events');
    const started = await sse.until((e) => e.event === 'run.started' && data(e).run_uuid === uuid);
    const startedEvent = started[started.length - 1]!;
    expect(data(startedEvent)).toMatchObject({ run_uuid: uuid, status: 'running', workflow_name: 'live-gate', target: 'events.example.com', total_steps: 2 });
    writeFileSync(gate, '');
    const rest = await sse.until((e) => e.event === 'run.completed' && data(e).run_uuid === uuid);
    const mine = rest.filter((e) => data(e).run_uuid === uuid);
    expect(mine.map((e) => e.event)).toEqual(['step.completed', 'step.completed', 'run.completed']);
    expect(data(mine[0]!)).toMatchObject({ step_name: 'talk', status: 'completed', exit_code: 0 });
    expect(data(mine[2]!)).toMatchObject({ status: 'completed', completed_steps: 2, total_steps: 2 });
    sse.close();

    const again = await openSse(`${url}/osm/api/events/stream`, { ...t.auth, 'last-event-id': startedEvent.id! });
    const replay = await again.until((e) => e.event === 'run.completed' && data(e).run_uuid === uuid);
    again.close();
    expect(replay.filter((e) => data(e).run_uuid === uuid).map((e) => e.id)).toEqual(mine.map((e) => e.id));
  });

  it('shows a credential bound to an org only its orgs\' runs: another org\'s log is a 404, its transitions are not sent', async () => {
    expect((await t.server.inject({ method: 'POST', url: '/osm/api/orgs', headers: t.auth, payload: { name: 'acme' } })).statusCode).toBe(201);
    const bound = { 'x-osm-api-key': (await createToken(t.app, { name: 'acme-viewer', role: 'viewer', orgs: ['acme'] })).token };
    const theirs = await openSse(`${url}/osm/api/events/stream`, bound);
    const mine = await openSse(`${url}/osm/api/events/stream`, t.auth);
    const { uuid, gate } = await startGated('orgs');
    writeFileSync(gate, '');
    await mine.until((e) => e.event === 'run.completed' && data(e).run_uuid === uuid);
    mine.close();
    const denied = await fetch(`${url}/osm/api/runs/${uuid}/logs`, { headers: { ...bound, accept: 'text/event-stream' } });
    expect(denied.status).toBe(404);
    // A later run of the caller's org shows up; nothing of the default org's run came before it.
    const ws = 'acmecorp.com';
    await t.app.repos.workspaces.upsertRunInfo({ name: ws, local_path: join(t.app.settings().paths.workspaces, ws) });
    const acme = (await t.app.repos.orgs.list()).find((o: { name: string }) => o.name === 'acme')!;
    await t.app.repos.orgs.assign(acme.uuid, [ws]);
    const own = await startGated('acme-org', ws);
    writeFileSync(own.gate, '');
    const seen = await theirs.until((e) => e.event === 'run.completed');
    theirs.close();
    expect(seen.map((e) => data(e).run_uuid)).not.toContain(uuid);
    expect(data(seen[seen.length - 1]!).run_uuid).toBe(own.uuid);
    const allowed = await openSse(`${url}/osm/api/runs/${own.uuid}/logs`, bound);
    expect((await allowed.rest()).map(lineOf).filter(Boolean)).toContain('after-line');
  });

  it('refuses a request that does not accept event streams, and one without credentials', async () => {
    const plain = await fetch(`${url}/osm/api/events/stream`, { headers: t.auth });
    expect(plain.status).toBe(406);
    const anon = await fetch(`${url}/osm/api/events/stream`, { headers: { accept: 'text/event-stream' } });
    expect(anon.status).toBe(401);
  });

  it('ends open streams when the server closes', async () => {
    const extra = await makeTestServer();
    await extra.server.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(extra.server.server.address() as { port: number }).port}`;
    const sse = await openSse(`${base}/osm/api/events/stream`, extra.auth);
    expect(openStreamCount(extra.server)).toBe(1);
    await extra.close();
    expect(await sse.next()).toBeUndefined();
    expect(openStreamCount(extra.server)).toBe(0);
    expect(existsSync(extra.base)).toBe(false);
  });
});
