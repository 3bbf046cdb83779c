/** Leases (migration 017) on both engines, and the scheduler leader held as a database lease. */
import { describe, expect, it } from 'vitest';
import { ENGINES, useStore } from './engines.js';
import { SchedulerLeader, storeLeaderLock } from '../../../../src/distributed/scheduler-leader.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(ENGINES)('leases on $name', (engine) => {
  const s = useStore(engine);

  it('one holder at a time; renewed by its holder; free again once expired or released', async () => {
    expect(await s().leases.acquire('l', 'a', 60_000)).toBe(true);
    expect(await s().leases.acquire('l', 'b', 60_000)).toBe(false);
    expect(await s().leases.holder('l')).toBe('a');
    expect(await s().leases.acquire('l', 'a', 60_000)).toBe(true);
    expect(await s().leases.release('l', 'b')).toBe(false);
    expect(await s().leases.release('l', 'a')).toBe(true);
    expect(await s().leases.holder('l')).toBeNull();
    expect(await s().leases.acquire('l', 'b', 50)).toBe(true);
    await sleep(80);
    expect(await s().leases.holder('l')).toBeNull();
    expect(await s().leases.acquire('l', 'c', 60_000)).toBe(true);
    expect(await s().leases.acquire('other', 'a', 60_000)).toBe(true);
  });

  it('two scheduler leaders on one database: exactly one leads; the standby takes over after a clean stop', async () => {
    const events: string[] = [];
    const leader = (name: string) =>
      new SchedulerLeader({ lock: storeLeaderLock(s()), ttlMs: 600, onElected: () => void events.push(`${name}+`), onDeposed: () => void events.push(`${name}-`) });
    const a = leader('a');
    const b = leader('b');
    await a.start();
    await b.start();
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    expect(b.status()).toMatchObject({ role: 'standby', lock_key: 'leases/scheduler-leader', holder: a.id });
    await sleep(700);
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    await a.stop();
    for (let i = 0; i < 30 && !b.isLeader; i++) await sleep(100);
    expect(b.isLeader).toBe(true);
    await b.stop();
    expect(events).toEqual(['a+', 'a-', 'b+', 'b-']);
  });
});
