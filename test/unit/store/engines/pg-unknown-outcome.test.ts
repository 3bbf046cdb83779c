/**
 * A run's write whose outcome is unknown (issue 14: "no run is marked failed only because the
 * database blinked"): the connection is lost after the statement was sent — an immediate shutdown
 * or crash restart of PostgreSQL, a socket cut off. A loopback proxy between osm and the server
 * cuts every connection either instead of forwarding the server's answer (the write was applied,
 * osm never heard of it) or instead of forwarding the statement (never applied). Within a run's
 * patience each of the run's writes then ends applied exactly once: the step and run transitions
 * are checked by their event, the step's insert by its key, upserts are sent again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgStore } from '../../../../src/store/pg/store.js';
import { withPatience } from '../../../../src/store/patience.js';
import type { AsyncStore } from '../../../../src/store/index.js';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../../../helpers/pg.js';
import { startTcpProxy, type TcpProxy } from '../../../helpers/tcp-proxy.js';

const available = await pgAvailable('pg unknown-outcome writes');

describe.runIf(available)('PostgreSQL: a run write cut off after it was sent is applied exactly once', () => {
  let database: PgDatabase;
  let proxy: TcpProxy;
  let store: AsyncStore;
  let direct: AsyncStore;
  beforeAll(async () => {
    database = await createPgDatabase('osm_unknown');
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    direct = await openPgStore(database.url);
    url.host = `127.0.0.1:${proxy.port}`;
    store = await openPgStore(url.toString(), { migrate: false });
  });
  afterAll(async () => {
    await store?.close();
    await direct?.close();
    await proxy?.close();
    await database?.drop();
  });

  const inRun = <T>(fn: () => Promise<T>) => withPatience(20_000, fn);
  // The next statement goes out on a connection already open (a new one's handshake is not the cut's).
  const cutOnNext = async (direction: 'request' | 'reply') => {
    await store.runs.countByStatus();
    proxy.cutOnNext(direction);
  };
  const eventsOf = async (uuid: string, topic: string) => (await direct.events.list({}, { offset: 0, limit: 1000 })).data.filter((e) => e.run_id === uuid && e.topic === topic);
  const event = (topic: string, uuid: string, name = topic) => ({ topic, name, source: 'executor', source_type: 'run', data_type: 'scan', data: { scan_id: uuid }, workspace: 'ws', run_id: uuid, workflow_name: 'wf', processed: true });
  const newRun = async (target: string) =>
    direct.runs.create({ run_uuid: crypto.randomUUID(), workflow_name: 'wf', workflow_kind: 'module', target, params: {}, status: 'queued', workspace: 'ws', trigger_type: 'manual' });

  for (const direction of ['reply', 'request'] as const) {
    it(`the ${direction} is lost: start, step insert, step finish and run finish each happen once`, async () => {
      const run = await newRun(`${direction}.example.com`);
      const uuid = run.run_uuid;

      await cutOnNext(direction);
      const started = await inRun(() => store.runs.start(run.id, process.pid, event('run.started', uuid), { workspace: 'ws', total_steps: 1 }));
      expect(proxy.armed()).toBe(false);
      expect(started?.status).toBe('running');
      expect(await eventsOf(uuid, 'run.started')).toHaveLength(1);

      await cutOnNext(direction);
      const step = await inRun(() => store.steps.create({ run_id: run.id, run_uuid: uuid, workspace: 'ws', step_name: 'only', step_type: 'bash', status: 'running', command: 'true' }));
      expect(proxy.armed()).toBe(false);
      expect(step.step_name).toBe('only');
      const rows = (await direct.steps.list({ run_id: run.id }, { offset: 0, limit: 10 })).data;
      expect(rows.map((s) => s.id)).toEqual([step.id]);

      await cutOnNext(direction);
      const finished = await inRun(() => store.steps.finish(step.id, 'completed', { output: 'ok', duration_ms: 5 }, { event: event('step.completed', uuid, 'only'), runId: run.id, count: true }));
      expect(proxy.armed()).toBe(false);
      expect(finished?.status).toBe('completed');
      expect(await eventsOf(uuid, 'step.completed')).toHaveLength(1);
      expect((await direct.runs.get(run.id))?.completed_steps).toBe(1);

      await cutOnNext(direction);
      const ended = await inRun(() => store.runs.finish(run.id, 'completed', {}, { ...event('run.completed', uuid), data: { scan_id: uuid, status: 'completed' } }));
      expect(proxy.armed()).toBe(false);
      expect(ended?.status).toBe('completed');
      expect(await eventsOf(uuid, 'run.completed')).toHaveLength(1);
      expect((await direct.runs.get(run.id))?.status).toBe('completed');
    }, 60_000);
  }

  it('outside a run (an API request) the same cut is a 503 at once, not a retry', async () => {
    const run = await newRun('api.example.com');
    await cutOnNext('reply');
    const err = await store.runs.start(run.id, process.pid, event('run.started', run.run_uuid)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'OSM_ERR_UNAVAILABLE', status: 503 });
    // The server did apply it: the store says so once asked again.
    expect((await store.runs.get(run.id))?.status).toBe('running');
  });
});
