/**
 * The lease watchdog of a worker (issue 15, fencing): the lock of each task in hand is read back
 * often, with its remaining time to live, which gives the latest expiry of the lock this worker
 * has confirmed. When another worker holds it, or it could expire before the next check without
 * having been confirmed (cut from Redis, or the process was paused), the task is reported lost —
 * before the lock expires, so before another worker's stalled check can hand the task on.
 */
import { readLock } from './records.js';

type RedisClient = Parameters<typeof readLock>[0];

export interface LeaseWatchOptions {
  prefix: string;
  /** BullMQ's lock duration (ms): the expiry assumed when a read gives no time to live. */
  lockDurationMs: number;
  /** Period of the checks (ms). */
  checkMs: number;
  /** A task whose lease is lost or may be: its run must stop here. */
  onLost: (uuid: string, why: string) => void;
}

export class LeaseWatch {
  /** The leases in hand: the lock's token and the latest expiry confirmed (ms since the epoch). */
  readonly held = new Map<string, { token: string; expiresAt: number }>();

  constructor(private readonly o: LeaseWatchOptions) {}

  /** Period of the checks (ms). */
  get checkMs(): number {
    return this.o.checkMs;
  }

  /** A task taken: its lock's time to live was read at `sentAt` or later (the first confirmation). */
  taken(uuid: string, token: string, sentAt: number, lockTtlMs: number): void {
    this.held.set(uuid, { token, expiresAt: sentAt + (lockTtlMs > 0 ? lockTtlMs : this.o.lockDurationMs / 2) });
  }

  released(uuid: string): void {
    this.held.delete(uuid);
  }

  /** One check of every lease in hand, with the queue's Redis client (undefined: not connected). */
  async check(clientOf: () => Promise<RedisClient> | undefined): Promise<void> {
    if (this.held.size === 0) return;
    const now = Date.now();
    for (const [uuid, lease] of this.held) {
      if (now + this.o.checkMs >= lease.expiresAt) this.o.onLost(uuid, `lock not confirmed; it expires in ${lease.expiresAt - now} ms`);
    }
    let client: RedisClient;
    try {
      const pending = clientOf();
      if (!pending) return;
      client = await pending;
    } catch {
      return;
    }
    await Promise.all(
      [...this.held].map(async ([uuid, lease]) => {
        const sentAt = Date.now();
        try {
          const { holder, ttlMs } = await readLock(client, this.o.prefix, uuid);
          if (holder === lease.token) lease.expiresAt = Math.max(lease.expiresAt, sentAt + (ttlMs > 0 ? ttlMs : this.o.lockDurationMs));
          else this.o.onLost(uuid, holder ? 'another worker holds it' : 'the lock expired');
        } catch {
          // Redis away: the expiry check above stops the run before the lock can expire.
        }
      }),
    );
  }
}
