/**
 * The import core shared by every importer (files, API bodies, workflow functions): records are
 * parsed and mapped one at a time, bad ones are counted with their line number (never aborting),
 * good ones are upserted in batches — one transaction per batch, events included.
 *
 * Events: at most `eventsPerBatch` individual `asset.discovered` / `asset.updated` events per
 * 10,000 rows (per batch when a batch size is given; new assets first), and the import ends with one summary event (`asset.import` or
 * `vuln.import`) holding the counts, plus `ingest.errors` when lines were rejected. An import of a
 * million hosts therefore writes a few hundred event rows, not a million, and stays fast; the
 * summary says how many individual events were left out.
 *
 * Two importers share this core: `AsyncRecordImporter` writes through the async store (CLI, API
 * services, anything running in the daemon) and `RecordImporter` through the synchronous SQLite
 * store (workflow functions, which are synchronous and run in script evaluator workers that open
 * the database by path).
 */
import type { AssetInput, AsyncStore, EventInput, Store, UpsertResult, VulnInput } from '../store/index.js';
import { asyncSqlite } from '../store/async.js';
import { parseJsonLine, type Mapped } from './records.js';
import type { ImportScope } from '../scope/index.js';

/**
 * Rows per transaction. Assets: 2,500 keeps the mapped rows of a batch (a few KB each for httpx
 * output with headers and technologies) to a few MB of heap — at 10,000 the 1M-line import peaked
 * at 295 MB RSS against a 300 MB budget (188 MB at 2,500 for 300k lines, and no slower). Findings
 * are smaller and were measurably slower in small batches (0.64 vs 0.81 of raw), so they keep
 * 10,000 (peak 262 MB at 1M lines, the raw loop's own figure).
 */
/** Rows per committed transaction by default, per kind (an interrupted import keeps whole batches only). */
export const DEFAULT_BATCH = { asset: 2_500, vuln: 10_000 } as const;
/**
 * On PostgreSQL findings go in batches of 2,500 too: a batch is one multi-row statement set whose
 * rows, parameters and answers the client holds at once (10,000 findings peaked at 368 MB RSS for
 * 100k findings, 2,500 stay under 300 MB), and the server gains nothing from bigger ones.
 */
export const PG_BATCH = { asset: 2_500, vuln: 2_500 } as const;
/** Individual asset events: at most `eventsPerBatch` per this many rows (see assetEvents). */
const EVENT_BUDGET_ROWS = 10_000;

export interface ImportStats {
  new: number;
  updated: number;
  unchanged: number;
  /** Records rejected (bad JSON, missing fields, over-long lines). */
  errors: number;
  /** Records deliberately not imported (other record types of an envelope stream). */
  skipped: number;
  /** Non-blank lines (or records) seen. */
  total: number;
  /** Rows dropped because their value or URL is out of the target scope (docs/scope.md). */
  out_of_scope: number;
  /** The first 100 rejected records: line number (1-based; the index for API bodies) and reason. */
  error_lines: { line: number; message: string }[];
}

export interface ImportOptions {
  /** Rows per transaction (default 2,500 assets, 10,000 findings). */
  batchSize?: number;
  /** Individual asset events written per batch (default 100). */
  eventsPerBatch?: number;
  /** Written on events. */
  runUuid?: string;
  workflowName?: string;
  /** Event source (default 'executor'). */
  eventSource?: string;
  /** Named in the summary and error events. */
  file?: string;
  /** Write events at all (default true). */
  events?: boolean;
  /** Write the closing summary event (default true; single-record imports turn it off). */
  summaryEvent?: boolean;
  /** How many rejected records are listed in error_lines (default 100). */
  maxErrorLines?: number;
  /** The target scope rows must be in (asset_value and url are checked); out-of-scope rows are dropped and counted. */
  scope?: ImportScope;
  /** Called after every committed batch (progress, tests). */
  onBatch?: (stats: Readonly<ImportStats>) => void;
}

/** How rows of one kind are stored, on either store (one batch method call per batch). */
export interface Upserter<T> {
  sync(store: Store, workspace: string, rows: T[], now: string): UpsertResult;
  async(repos: AsyncStore, workspace: string, rows: T[], now: string): Promise<UpsertResult>;
}

/** One kind of import: how a record maps to a row and how rows are stored. */
export interface ImportKind<T> {
  kind: 'asset' | 'vuln';
  map(record: Record<string, unknown>, raw: string): Mapped<T>;
  upsert: Upserter<T>;
}

/** The store an async import writes to; a synchronous SQLite store is adapted (single-connection tools and tests). */
export type ImportStore = Store | AsyncStore;

const adapted = new WeakMap<Store, AsyncStore>();

/** `store` behind the async interface (as is when it already is; one adapter per connection). */
export function asAsyncStore(store: ImportStore): AsyncStore {
  if (!('db' in store)) return store;
  let repos = adapted.get(store);
  if (!repos) adapted.set(store, (repos = asyncSqlite(store)));
  return repos;
}

const MAX_ERROR_LINES = 100;

/** Parsing, mapping, scope, stats and events; where a full batch goes is up to the subclass. */
export abstract class ImportCore<T> {
  private batch: T[] = [];
  private eventsWritten = 0;
  private eventsOmitted = 0;
  readonly stats: ImportStats = { new: 0, updated: 0, unchanged: 0, errors: 0, skipped: 0, total: 0, out_of_scope: 0, error_lines: [] };

  constructor(
    protected readonly workspace: string,
    protected readonly kind: ImportKind<T>,
    protected readonly opts: ImportOptions = {},
  ) {}

  /** A full batch (and, at the end, the last one) to store. */
  protected abstract batchReady(rows: T[]): void;

  /** Rows per batch: the option, else the kind's default. */
  protected batchLimit(): number {
    return this.opts.batchSize ?? DEFAULT_BATCH[this.kind.kind];
  }

  /** One line of a JSONL file (null: over the length cap). Blank lines are ignored. */
  line(lineNo: number, text: string | null): void {
    if (text === null) {
      this.stats.total++;
      this.fail(lineNo, 'line too long');
      return;
    }
    const trimmed = text.trim();
    if (trimmed === '') return;
    this.stats.total++;
    const parsed = parseJsonLine(trimmed);
    if (!parsed.ok) {
      this.fail(lineNo, parsed.message);
      return;
    }
    this.add(lineNo, parsed.value, trimmed);
  }

  /** One already-parsed record (API bodies); `index` is reported for errors. */
  record(index: number, record: Record<string, unknown>): void {
    this.stats.total++;
    this.add(index, record, JSON.stringify(record));
  }

  /** One row mapped by the caller (tool importers expand one tool record into several rows). */
  mapped(line: number, mapped: Mapped<T>): void {
    this.stats.total++;
    this.take(line, mapped);
  }

  /** A record rejected before mapping (e.g. not an object). */
  fail(line: number, message: string): void {
    this.stats.errors++;
    if (this.stats.error_lines.length < (this.opts.maxErrorLines ?? MAX_ERROR_LINES)) this.stats.error_lines.push({ line, message });
  }

  private add(line: number, record: Record<string, unknown>, raw: string): void {
    this.take(line, this.kind.map(record, raw));
  }

  private take(line: number, mapped: Mapped<T>): void {
    if (!mapped.ok) {
      if (mapped.skip) this.stats.skipped++;
      else this.fail(line, mapped.message);
      return;
    }
    const scope = this.opts.scope;
    if (scope) {
      const row = mapped.value as { asset_value?: unknown; url?: unknown };
      const values = [row.asset_value, row.url].filter((v): v is string => typeof v === 'string' && v !== '');
      const out = values.find((v) => !scope.admits(v));
      if (out !== undefined) {
        this.stats.out_of_scope++;
        scope.drop(out);
        return;
      }
    }
    this.batch.push(mapped.value);
    if (this.batch.length >= this.batchLimit()) this.takeBatch();
  }

  /** Hands the rows collected so far to batchReady. */
  protected takeBatch(): void {
    if (this.batch.length === 0) return;
    const rows = this.batch;
    this.batch = [];
    this.batchReady(rows);
  }

  /** Counts a stored batch; answers the events to write with it (same transaction). */
  protected stored(rows: T[], res: UpsertResult): EventInput[] {
    this.stats.new += res.new;
    this.stats.updated += res.updated;
    this.stats.unchanged += res.unchanged;
    return this.kind.kind === 'asset' && this.opts.events !== false ? this.assetEvents(rows as unknown as AssetInput[], res) : [];
  }

  /** Individual discovered/updated events, capped per batch. */
  private assetEvents(rows: AssetInput[], res: UpsertResult): EventInput[] {
    const byId = new Map<number, AssetInput>();
    res.ids.forEach((id, i) => byId.set(id, rows[i]!));
    const wanted = [...res.newIds.map((id) => ['asset.discovered', id] as const), ...res.updatedIds.map((id) => ['asset.updated', id] as const)];
    // The budget grows by `eventsPerBatch` per EVENT_BUDGET_ROWS rows seen (whatever the batch
    // size): small imports get every event up to the cap, a million rows a few hundred events.
    const perBudget = Math.max(0, this.opts.eventsPerBatch ?? 100);
    const budgetRows = this.opts.batchSize ?? EVENT_BUDGET_ROWS;
    const seen = this.stats.new + this.stats.updated + this.stats.unchanged;
    const allowed = perBudget * (1 + Math.floor(Math.max(0, seen - 1) / budgetRows));
    const cap = Math.max(0, allowed - this.eventsWritten);
    const out: EventInput[] = [];
    for (const [topic, id] of wanted.slice(0, cap)) {
      const a = byId.get(id)!;
      out.push({
        ...this.eventBase(),
        topic,
        name: a.asset_value,
        data_type: 'asset',
        data: { url: a.url ?? '', status_code: a.status_code ?? 0, title: a.title ?? '', tech: a.tech ?? [] },
      });
    }
    this.eventsWritten += Math.min(cap, wanted.length);
    this.eventsOmitted += Math.max(0, wanted.length - cap);
    return out;
  }

  /** The closing summary events (after the last batch and the scope flush). */
  protected summaryEvents(): EventInput[] {
    if (this.opts.events === false || this.opts.summaryEvent === false || this.stats.total === 0) return [];
    const { error_lines, ...counts } = this.stats;
    const out: EventInput[] = [
      {
        ...this.eventBase(),
        topic: `${this.kind.kind}.import`,
        data_type: this.kind.kind,
        data: { file: this.opts.file ?? '', ...counts, events_written: this.eventsWritten, events_omitted: this.eventsOmitted },
      },
    ];
    if (this.stats.errors > 0) {
      out.push({
        ...this.eventBase(),
        topic: 'ingest.errors',
        data_type: this.kind.kind,
        data: { file: this.opts.file ?? '', errors: this.stats.errors, error_lines: error_lines.slice(0, 10) },
      });
    }
    return out;
  }

  private eventBase() {
    return {
      source: this.opts.eventSource ?? 'executor',
      source_type: 'ingest',
      workspace: this.workspace,
      run_id: this.opts.runUuid ?? '',
      workflow_name: this.opts.workflowName ?? '',
    };
  }
}

/**
 * Imports through the synchronous SQLite store, each batch committed as it fills. For workflow
 * functions (synchronous, in evaluator workers that open the database by path).
 */
export class RecordImporter<T> extends ImportCore<T> {
  constructor(
    private readonly store: Store,
    workspace: string,
    kind: ImportKind<T>,
    opts: ImportOptions = {},
  ) {
    super(workspace, kind, opts);
  }

  protected batchReady(rows: T[]): void {
    const now = new Date().toISOString();
    this.store.tx(() => {
      this.store.events.insertMany(this.stored(rows, this.kind.upsert.sync(this.store, this.workspace, rows, now)));
    });
    this.opts.onBatch?.(this.stats);
  }

  /** Commits the last batch and writes the summary events. */
  finish(): ImportStats {
    this.takeBatch();
    this.opts.scope?.flush?.();
    this.store.events.insertMany(this.summaryEvents());
    return this.stats;
  }
}

/**
 * Imports through the async store. Feeding stays synchronous (parsers push records); full batches
 * wait until the feeder calls `settle()` — after each chunk it read — which stores them, one
 * transaction per batch, in order. On PostgreSQL the batch is stored while the feeder reads and
 * maps the next chunk (the server's work and the client's overlap): `settle()` starts a batch
 * once the one before it is committed and returns without waiting for it; `finish()` waits for
 * the last. A failed batch fails the next `settle()` or `finish()`, and no batch after it is
 * started. On SQLite (one thread does both) each batch is stored before `settle()` returns.
 */
export class AsyncRecordImporter<T> extends ImportCore<T> {
  private readonly ready: T[][] = [];
  private readonly repos: AsyncStore;
  /** The batch being stored (PostgreSQL). */
  private inFlight: Promise<void> | undefined;

  constructor(store: ImportStore, workspace: string, kind: ImportKind<T>, opts: ImportOptions = {}) {
    super(workspace, kind, opts);
    this.repos = asAsyncStore(store);
  }

  protected batchReady(rows: T[]): void {
    this.ready.push(rows);
  }

  protected override batchLimit(): number {
    return this.opts.batchSize ?? (this.repos.engine === 'postgresql' ? PG_BATCH : DEFAULT_BATCH)[this.kind.kind];
  }

  /** Stores the batches filled so far (on PostgreSQL the last of them may still be in flight on return). */
  async settle(): Promise<void> {
    for (let rows = this.ready.shift(); rows; rows = this.ready.shift()) {
      await this.drain();
      const storing = this.store(rows);
      // Awaited by the next settle() or finish(); until then a failure must not count as unhandled.
      storing.catch(() => undefined);
      this.inFlight = storing;
    }
    if (this.repos.engine !== 'postgresql') await this.drain();
  }

  /** Waits for the batch in flight, if any (rethrows its failure). */
  private async drain(): Promise<void> {
    const storing = this.inFlight;
    this.inFlight = undefined;
    await storing;
  }

  /** One batch in one transaction, with its events. */
  private async store(batch: T[]): Promise<void> {
    const now = new Date().toISOString();
    await this.repos.tx(async () => {
      const events = this.stored(batch, await this.kind.upsert.async(this.repos, this.workspace, batch, now));
      if (events.length > 0) await this.repos.events.insertMany(events);
    });
    this.opts.onBatch?.(this.stats);
  }

  /** Stores the last batch and writes the summary events. */
  async finish(): Promise<ImportStats> {
    this.takeBatch();
    await this.settle();
    await this.drain();
    this.opts.scope?.flush?.();
    await this.repos.events.insertMany(this.summaryEvents());
    return this.stats;
  }
}

/** Stores assets with the repository's merge rules. */
export function assetUpsert(matchByValue = false): Upserter<AssetInput> {
  return {
    sync: (store, workspace, rows, now) => store.assets.upsertMany(workspace, rows, now, { matchByValue }),
    async: (repos, workspace, rows, now) => repos.assets.upsertMany(workspace, rows, now, { matchByValue }),
  };
}

/** Stores findings deduplicated by fingerprint. */
export const vulnUpsert: Upserter<VulnInput> = {
  sync: (store, workspace, rows, now) => store.vulns.upsertMany(workspace, rows, now),
  async: (repos, workspace, rows, now) => repos.vulns.upsertMany(workspace, rows, now),
};
