/**
 * One scheduler per Redis prefix — or per database, for daemons that share one PostgreSQL
 * database without Redis (a lease row of the `leases` table, src/store/leases.ts, with the same
 * take / renew / step-down rules). Several masters (`osm serve --master`) may share a prefix, for
 * availability; each serves the API, but only the one holding `<prefix>:scheduler-leader` runs
 * its scheduler, so a cron schedule never fires twice.
 *
 * The lock is the usual single-instance Redis lock: `SET key id NX PX ttl` to take it, a Lua
 * compare-and-expire to renew it (every third of the TTL), a Lua compare-and-delete to release
 * it. A leader that cannot renew for two thirds of the TTL (Redis away) stops its scheduler
 * before the lock can expire and be taken elsewhere. A standby tries again at every tick, so it
 * takes over at most one TTL plus one tick after the leader died, and at its next tick after a
 * clean shutdown (which releases the lock).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { messageOf } from '../errors.js';
import type { AppContext } from '../services/context.js';
import type { AsyncStore } from '../store/async.js';
import { Scheduler, setSchedulerRole, type SchedulerOptions, type SchedulerRole } from '../scheduler/index.js';
import { SCHEDULER_LOCK_TTL_MS, schedulerLeaderKey } from './keys.js';
import { connectionOptions, type DistributedConfig } from './redis-config.js';

const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** Where the leader lock lives: Redis (masters sharing a prefix) or the shared database. */
export interface LeaderLock {
  /** What the status routes show as `lock_key`. */
  readonly key: string;
  /** Names the lock's home in log lines ("Redis", "the database"). */
  readonly where: string;
  /** What a standby logs about the leader. */
  readonly standbyNote: string;
  connect(): Promise<void>;
  /** Takes the lock when free (true when taken). */
  acquire(id: string, ttlMs: number): Promise<boolean>;
  /** Extends the lock when `id` still holds it (false when lost). */
  renew(id: string, ttlMs: number): Promise<boolean>;
  holder(): Promise<string | null>;
  release(id: string): Promise<void>;
  close(): void;
}

/** The Redis lock of a prefix: `SET NX PX`, Lua compare-and-expire / compare-and-delete. */
export function redisLeaderLock(config: DistributedConfig): LeaderLock {
  const key = schedulerLeaderKey(config.prefix);
  let client: Redis | undefined;
  return {
    key,
    where: 'Redis',
    standbyNote: 'another master runs the schedules of this Redis prefix',
    async connect() {
      // Commands fail at once while Redis is away (no offline queue): a lock must not be renewed late.
      client = new Redis({ ...connectionOptions(config.redis), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      await client.connect();
    },
    acquire: async (id, ttl) => (await client!.set(key, id, 'PX', ttl, 'NX')) === 'OK',
    renew: async (id, ttl) => Number(await client!.eval(RENEW, 1, key, id, String(ttl))) === 1,
    holder: () => client!.get(key),
    async release(id) {
      await client?.eval(RELEASE, 1, key, id).catch(() => undefined);
    },
    close: () => client?.disconnect(),
  };
}

/** The database lease `scheduler-leader` (daemons sharing one PostgreSQL database). */
export function storeLeaderLock(repos: AsyncStore, name = 'scheduler-leader'): LeaderLock {
  return {
    key: `leases/${name}`,
    where: 'the database',
    standbyNote: 'another daemon runs the schedules of this database',
    connect: async () => undefined,
    acquire: (id, ttl) => repos.leases.acquire(name, id, ttl),
    renew: (id, ttl) => repos.leases.acquire(name, id, ttl),
    holder: () => repos.leases.holder(name),
    async release(id) {
      await repos.leases.release(name, id).catch(() => undefined);
    },
    close: () => undefined,
  };
}

export interface LeaderOptions {
  /** Redis lock of this distributed config (when `lock` is not given). */
  config?: DistributedConfig;
  /** The lock to hold (default: the Redis lock of `config`). */
  lock?: LeaderLock;
  /** Lock lifetime without renewal (default 15 s). */
  ttlMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Called when this process becomes the leader, and when it stops being one. */
  onElected: () => Promise<void> | void;
  onDeposed: () => Promise<void> | void;
}

/** Holds, renews and releases the scheduler lock of one prefix. */
export class SchedulerLeader {
  /** This master's value in the lock. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly key: string;
  private readonly ttl: number;
  private readonly tickMs: number;
  private readonly lock: LeaderLock;
  private leader = false;
  private holder: string | null = null;
  private lastRenewed = 0;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private stopped = false;
  private lastProblem = '';

  constructor(private readonly opts: LeaderOptions) {
    if (!opts.lock && !opts.config) throw new Error('SchedulerLeader needs a lock or a distributed config');
    this.lock = opts.lock ?? redisLeaderLock(opts.config!);
    this.key = this.lock.key;
    this.ttl = Math.max(300, opts.ttlMs ?? SCHEDULER_LOCK_TTL_MS);
    this.tickMs = Math.max(100, Math.floor(this.ttl / 3));
  }

  private log(msg: string, fields: Record<string, unknown> = {}): void {
    this.opts.log?.(msg, { lock: this.key, ...fields });
  }

  /** What the status routes show. */
  status(): SchedulerRole {
    return { role: this.leader ? 'leader' : 'standby', lock_key: this.key, holder: this.leader ? this.id : this.holder };
  }

  get isLeader(): boolean {
    return this.leader;
  }

  /** Connects, makes a first attempt (so the role is known when this resolves), then ticks. */
  async start(): Promise<void> {
    await this.lock.connect();
    await this.tick();
    this.timer = setInterval(() => {
      if (!this.ticking) this.ticking = this.tick().finally(() => (this.ticking = undefined));
    }, this.tickMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.leader) {
        if (await this.lock.renew(this.id, this.ttl)) {
          this.lastRenewed = Date.now();
          return;
        }
        await this.depose('the scheduler lock was lost to another master');
      }
      if (await this.lock.acquire(this.id, this.ttl)) {
        this.lastRenewed = Date.now();
        await this.elect();
        return;
      }
      const holder = await this.lock.holder();
      if (holder !== this.holder) {
        this.holder = holder;
        this.log(`scheduler: standby, ${this.lock.standbyNote}`, { holder });
      }
      this.lastProblem = '';
    } catch (err) {
      const problem = messageOf(err);
      if (problem !== this.lastProblem) this.log(`scheduler: cannot reach ${this.lock.where} for the scheduler lock`, { error: problem });
      this.lastProblem = problem;
      // Step down before the lock could expire and be taken by a standby: never two schedulers.
      if (this.leader && Date.now() - this.lastRenewed >= this.ttl - this.tickMs) await this.depose('the scheduler lock could not be renewed');
    }
  }

  private async elect(): Promise<void> {
    this.leader = true;
    this.holder = this.id;
    this.log('scheduler: this master is the leader and runs the schedules', { id: this.id });
    await this.opts.onElected();
  }

  private async depose(why: string): Promise<void> {
    this.leader = false;
    this.holder = null;
    this.log(`scheduler: stopped, ${why}`);
    await this.opts.onDeposed();
  }

  /** Stops ticking; a leader stops its scheduler first, then releases the lock for a standby. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    if (this.leader) {
      this.leader = false;
      await this.opts.onDeposed();
      await this.lock.release(this.id);
    }
    this.lock.close();
  }
}

/**
 * The scheduler of a master: started only while this master holds the scheduler lock. The
 * returned handle's `stop()` stops both; the role is readable through `schedulerRole(app)`.
 */
export async function startLeaderScheduler(app: AppContext, config: DistributedConfig | LeaderLock, opts: SchedulerOptions & { ttlMs?: number } = {}): Promise<{ leader: SchedulerLeader; stop: () => Promise<void> }> {
  const scheduler = new Scheduler(app, opts);
  const leader = new SchedulerLeader({
    ...('acquire' in config ? { lock: config } : { config }),
    ...(opts.ttlMs !== undefined ? { ttlMs: opts.ttlMs } : {}),
    ...(opts.log ? { log: opts.log } : {}),
    onElected: () => scheduler.start(),
    onDeposed: () => scheduler.stop(),
  });
  setSchedulerRole(app, () => leader.status());
  try {
    await leader.start();
  } catch (err) {
    setSchedulerRole(app, undefined);
    await leader.stop();
    throw err;
  }
  return {
    leader,
    stop: async () => {
      await leader.stop();
      setSchedulerRole(app, undefined);
    },
  };
}
