/**
 * Two real `osm serve --master` on one Redis prefix (separate base folders): both serve the API,
 * exactly one runs its scheduler — GET /osm/api/event-receiver/status says which, and `osm worker
 * status` names the holder. kill -9 of the leader: the standby takes over once the lock expires.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, runOsm } from '../helpers/cli.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix, until } from './helpers.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  dirs.push(d);
  return d;
};
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

interface Master {
  child: ChildProcess;
  out: () => string;
  url: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startMaster(prefix: string): Promise<Master> {
  const child = spawn(process.execPath, [BIN, '-b', tmp(), 'serve', '--master', '--redis-url', REDIS_URL, '--port', '0', '--host', '127.0.0.1', '-A', '--no-hot-reload'], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', OSM_REDIS_PREFIX: prefix },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const url = await until(() => /listening on .*\((http:\/\/[^)]+)\)/.exec(text)?.[1] ?? (child.exitCode !== null ? 'exited' : undefined), 'the master to listen');
  expect(url, text).not.toBe('exited');
  return { child, out: () => text, url, exit };
}

async function statusOf(m: Master): Promise<{ running: boolean; scheduler_leader: { role: string; holder: string | null; lock_key: string } }> {
  return (await fetch(`${m.url}/osm/api/event-receiver/status`)).json() as never;
}

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('two masters on one Redis prefix', () => {
  const prefix = testPrefix();
  afterAll(async () => dropPrefix(prefix));

  it('run one scheduler between them, and the standby takes over after kill -9 of the leader', async () => {
    const first = await startMaster(prefix);
    const second = await startMaster(prefix);
    const s1 = await statusOf(first);
    const s2 = await statusOf(second);
    expect(s1).toMatchObject({ running: true, scheduler_leader: { role: 'leader', lock_key: `${prefix}:scheduler-leader` } });
    expect(s2).toMatchObject({ running: false, scheduler_leader: { role: 'standby', holder: s1.scheduler_leader.holder } });
    expect(s1.scheduler_leader.holder).toMatch(new RegExp(`:${first.child.pid}:`));
    expect(second.out()).toContain('scheduler: standby, another master runs the schedules of this Redis prefix');

    const status = await runOsm(['-b', tmp(), 'worker', 'status', '--json', '--redis-url', REDIS_URL, '--redis-prefix', prefix]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).scheduler_leader).toBe(s1.scheduler_leader.holder);

    first.child.kill('SIGKILL');
    await first.exit;
    const taken = await until(async () => {
      const s = await statusOf(second);
      return s.scheduler_leader.role === 'leader' ? s : undefined;
    }, 'the standby to take the scheduler over', 45_000);
    expect(taken).toMatchObject({ running: true, scheduler_leader: { holder: expect.stringMatching(new RegExp(`:${second.child.pid}:`)) } });

    // A clean shutdown releases the lock for the next master.
    second.child.kill('SIGTERM');
    expect(await second.exit).toEqual({ code: 0, signal: null });
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      expect(await redis.get(`${prefix}:scheduler-leader`)).toBeNull();
    } finally {
      redis.disconnect();
    }
  }, 90_000);
});
