/**
 * The master's reader of the durable attempt records (`<prefix>:records`, see records.ts): reads
 * them oldest first, applies what one read returned in one transaction (apply-records.ts), and
 * deletes them once applied. Reads are serial; callers of a short window share one read.
 */
import type { RedisClient } from 'bullmq';
import { messageOf } from '../errors.js';
import type { AppContext } from '../services/context.js';
import type { RunRecord } from '../store/index.js';
import { ackRecords, readRecords, type AttemptRecordMsg } from './records.js';
import { applyAttemptRecord, newRecordPass, runAfter, type RecordContext, type RecordPass } from './apply-records.js';

/**
 * Records are read at most this long after a task was taken (its start record is written right
 * after) or completed (its end record was written before): one read for the tasks of that window.
 */
const CONSUME_WINDOW_MS = 25;
/** Records per read. */
const BATCH = 200;

type Batch = Awaited<ReturnType<typeof readRecords>>;

export interface RecordConsumerDeps {
  app: AppContext;
  prefix: string;
  /** The queue's Redis client; throws once the master stopped. */
  client: () => Promise<RedisClient>;
  records: RecordContext;
  /** The master's distributed run of a task (undefined for none, or a local run). */
  runOf: (uuid: string) => Promise<RunRecord | undefined>;
  stopped: () => boolean;
}

export class RecordConsumer {
  private consuming?: Promise<void>;
  private consumeAgain = false;
  /** The read of the current window (shortly); `fire` starts it at once. */
  private window?: { promise: Promise<void>; fire: () => void };

  constructor(private readonly d: RecordConsumerDeps) {}

  /**
   * Applies the pending records (oldest first) and removes them once applied. Serial: a call
   * while one is running makes it read once more before resolving.
   */
  consume(): Promise<void> {
    if (this.d.stopped()) return Promise.resolve();
    if (this.consuming) {
      this.consumeAgain = true;
      return this.consuming;
    }
    this.consuming = (async () => {
      do {
        this.consumeAgain = false;
        await this.consumeOnce();
      } while (this.consumeAgain && !this.d.stopped());
    })()
      .catch((err: unknown) => this.d.records.log('distributed: cannot read attempt records', { error: messageOf(err) }))
      .finally(() => {
        this.consuming = undefined;
      });
    return this.consuming;
  }

  /**
   * A read within CONSUME_WINDOW_MS, shared by every caller of that window: the tasks that start
   * and end in that moment cost one read and one acknowledgement, not one each.
   */
  shortly(): Promise<void> {
    if (!this.window) {
      let fire!: () => void;
      const gate = new Promise<void>((resolve) => (fire = resolve));
      const timer = setTimeout(() => fire(), CONSUME_WINDOW_MS);
      const promise = gate.then(() => {
        clearTimeout(timer);
        this.window = undefined;
        return this.consume();
      });
      this.window = { promise, fire };
    }
    return this.window.promise;
  }

  /** Stopping: a window's waiters are released at once (consume() does nothing once stopped). */
  async stop(): Promise<void> {
    this.window?.fire();
    await this.consuming;
  }

  private async consumeOnce(): Promise<void> {
    const client = await this.d.client();
    for (;;) {
      const batch = await readRecords(client, this.d.prefix, BATCH);
      if (batch.length === 0) return;
      for (const entry of batch) if (!entry.record) this.d.records.log('distributed: dropping an unreadable attempt record', { id: entry.id, error: entry.invalid });
      const { done, complete } = await this.applyBatch(batch);
      await ackRecords(client, this.d.prefix, done);
      if (!complete || batch.length < BATCH) return;
    }
  }

  /**
   * Applies a batch of records in one transaction (one commit for the runs of a moment, not two
   * per run); their webhooks go once it committed. When that fails, the batch is applied record
   * by record, each in its own transactions, up to the first that fails (not acknowledged: retried
   * on the next read; the database may be busy). Every record applies idempotently, so one applied
   * by a rolled-back attempt is simply applied again.
   */
  private async applyBatch(batch: Batch): Promise<{ done: string[]; complete: boolean }> {
    let pass = newRecordPass();
    try {
      await this.d.app.repos.tx(async () => {
        // Afresh each time the transaction runs (PostgreSQL runs it again after a cut connection).
        pass = newRecordPass();
        // The master's run of each record, read once per batch (a run ships several records at once).
        const runs = new Map<string, Promise<RunRecord | undefined>>();
        for (const entry of batch) if (entry.record) await this.applyRecord(entry.record, runs, pass);
      });
    } catch {
      return this.applyOneByOne(batch);
    }
    await runAfter(pass, this.d.records.log);
    return { done: batch.map((e) => e.id), complete: true };
  }

  private async applyOneByOne(batch: Batch): Promise<{ done: string[]; complete: boolean }> {
    const done: string[] = [];
    const runs = new Map<string, Promise<RunRecord | undefined>>();
    for (const entry of batch) {
      if (entry.record) {
        const pass = newRecordPass();
        try {
          await this.applyRecord(entry.record, runs, pass);
        } catch (err) {
          this.d.records.log('distributed: cannot apply an attempt record', { run_uuid: entry.record.run_uuid, attempt: entry.record.attempt, error: messageOf(err) });
          return { done, complete: false };
        }
        await runAfter(pass, this.d.records.log);
      }
      done.push(entry.id);
    }
    return { done, complete: true };
  }

  private async applyRecord(rec: AttemptRecordMsg, runs: Map<string, Promise<RunRecord | undefined>>, pass: RecordPass): Promise<void> {
    // Start and end records change the run (status, workspace): read it afresh for them.
    if (rec.kind === 'start' || rec.kind === 'end' || !runs.has(rec.run_uuid)) runs.set(rec.run_uuid, this.d.runOf(rec.run_uuid));
    const run = await runs.get(rec.run_uuid);
    if (!run) return;
    if (rec.kind === 'end') runs.delete(rec.run_uuid);
    await applyAttemptRecord(this.d.records, run, rec, pass);
  }
}
