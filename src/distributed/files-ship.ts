/**
 * The worker's side of shipped files (issue 15): the run's log folder (output journal and step
 * log files) travels to the master while the run executes — the bytes added since the last round,
 * about every second, so `osm logs -f` on the master follows the run — and, when it ends, the rest
 * of the folder plus the run's artifact files, as fenced `file` records written before the `end`
 * record (records.ts; applied by files-apply.ts). Paths are sent relative to the run's workspace
 * folder; only regular files inside it whose path is shippable (safe names) travel, opened without
 * following links. At most `distributed.ship_files_max_mb` per run: beyond it the rest stays on the
 * worker, the result says `truncated` and each artifact left behind says where it is. With object
 * storage (`storage.enabled` and `upload_outputs`) the run itself uploaded its artifacts: an artifact
 * the bucket holds unchanged travels as a reference (`stored`), not as bytes; logs always travel.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, constants as fsc, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { AppContext } from '../services/context.js';
import { JOURNAL_FILE } from '../engine/live/journal.js';
import { STATE_FILES } from '../engine/state-files.js';
import { isInside, isSafeName } from '../util/fs-safe.js';
import { FILE_CHUNK_BYTES, isShippablePath, type FileRecord } from './records.js';
import { shipCapBytes, workspaceRoot } from './files-apply.js';
import type { TaskResult } from './protocol.js';
import { storageClient, type StorageHandle } from '../storage/client.js';
import { workspaceKeyPrefix } from '../storage/keys.js';
import { statObject } from '../storage/ops.js';
import { uploadsEnabled } from '../storage/run-upload.js';
import { sameContent } from '../storage/sync.js';

export type FileChunk = Pick<FileRecord, 'workspace' | 'path' | 'offset' | 'data' | 'eof' | 'stored'>;

/**
 * Sends chunks in order, fenced, all or none (one round trip): false when refused (the lease was
 * lost or a newer attempt started).
 */
export type SendChunks = (chunks: FileChunk[]) => Promise<boolean>;

/** Chunks are held back and sent together up to this many bytes (base64) or chunks. */
const BATCH_BYTES = 1024 * 1024;
const BATCH_CHUNKS = 64;

/** A fenced send was refused: nothing more of this attempt is shipped. */
class Refused extends Error {}

/*
 * File access is synchronous: a run ships a handful of small files, and each asynchronous call
 * would wait for a thread-pool round trip and a turn of the event loop (milliseconds apiece on a
 * busy worker, once per file and per call). A big file is read one chunk (FILE_CHUNK_BYTES) at a
 * time, with the sends in between.
 */

/** An open regular file (not followed when a link) and its size; undefined when it is not one. */
function openRegular(path: string): { fd: number; size: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile()) return { fd, size: st.size };
  } catch {
    /* not readable */
  }
  closeQuietly(fd);
  return undefined;
}

/** The size of a path (not followed), undefined when it cannot be read. */
function sizeOf(path: string): number | undefined {
  try {
    return lstatSync(path).size;
  } catch {
    return undefined;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}

/** Ships one run's files from its worker; `round()` while it runs, `finish()` when it ended. */
export class FileShipper {
  /** Bytes of each file (workspace-relative path) shipped so far. */
  private readonly sent = new Map<string, number>();
  /** Chunks not sent yet, and the end offset of each file they reach. */
  private batch: FileChunk[] = [];
  private batchBytes = 0;
  private readonly pending = new Map<string, number>();
  private total = 0;
  private refused = false;
  private chain: Promise<unknown> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  /** Files (or their ends) left on the worker because of the cap. */
  readonly leftBehind: string[] = [];
  /** Artifacts sent as a reference to object storage. */
  readonly stored: string[] = [];
  /** Object storage client (null: off or not configured). */
  private storage?: StorageHandle | null;

  constructor(
    private readonly app: AppContext,
    private readonly runUuid: string,
    private readonly send: SendChunks,
    private readonly log: (msg: string, fields?: Record<string, unknown>) => void = () => undefined,
    private readonly capBytes = shipCapBytes(app),
  ) {}

  /** Ships the log folder's new bytes every `ms` until `finish()` or `stop()`. */
  startLive(ms: number): void {
    this.timer = setInterval(() => void this.serial(() => this.shipLogs(false)), ms);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Bytes shipped so far. */
  get shippedBytes(): number {
    return this.total;
  }

  /** Bytes of `rel` shipped so far, counting chunks still held back. */
  private upTo(rel: string): number | undefined {
    return this.pending.get(rel) ?? this.sent.get(rel);
  }

  /** Holds a chunk back; the batch leaves when it is full. */
  private async emit(chunk: FileChunk, bytes: number): Promise<void> {
    this.batch.push(chunk);
    this.batchBytes += chunk.data.length;
    this.total += bytes;
    if (!chunk.stored) this.pending.set(chunk.path, chunk.offset + bytes);
    if (this.batchBytes >= BATCH_BYTES || this.batch.length >= BATCH_CHUNKS) await this.flush();
  }

  /** Sends the chunks held back (one round trip); Refused when the master may not get them. */
  private async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    const chunks = this.batch;
    const reached = this.dropBatch();
    let ok: boolean;
    try {
      ok = await this.send(chunks);
    } catch (err) {
      // Not sent: the next round sends these bytes again.
      for (const [rel, end] of reached) this.total -= end - (this.sent.get(rel) ?? 0);
      throw err;
    }
    if (!ok) throw new Refused();
    for (const [rel, end] of reached) this.sent.set(rel, end);
  }

  /** Empties the batch; the end offsets it reached. */
  private dropBatch(): [string, number][] {
    const reached = [...this.pending];
    this.batch = [];
    this.batchBytes = 0;
    this.pending.clear();
    return reached;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T | undefined> {
    const next = this.chain.then(fn).catch((err: unknown) => {
      // Chunks held back by a round that failed are not sent: the next round sends them again.
      for (const [rel, end] of this.dropBatch()) this.total -= end - (this.sent.get(rel) ?? 0);
      if (err instanceof Refused) this.refused = true;
      else this.log('cannot ship files to the master', { run_uuid: this.runUuid, error: (err as Error).message });
      return undefined;
    });
    this.chain = next;
    return next;
  }

  /** The scratch run's workspace and its real folder on this worker (undefined before the run exists). */
  private async where(): Promise<{ workspace: string; root: string } | undefined> {
    const run = await this.app.repos.runs.getByUuid(this.runUuid);
    if (!run?.workspace || !isSafeName(run.workspace)) return undefined;
    try {
      return { workspace: run.workspace, root: realpathSync(await workspaceRoot(this.app, run.workspace)) };
    } catch {
      return undefined;
    }
  }

  /**
   * One round over the log folder. The journal's size is taken first and the step log files are
   * shipped before it, so every journal record the master holds names bytes it holds too.
   */
  private async shipLogs(final: boolean, where?: { workspace: string; root: string }): Promise<void> {
    if (this.refused) return;
    const at = where ?? (await this.where());
    if (!at || !isSafeName(this.runUuid)) return;
    const dir = join(at.root, 'logs', this.runUuid);
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isFile() && isSafeName(d.name)).map((d) => d.name);
    } catch {
      return;
    }
    const journal = names.includes(JOURNAL_FILE) ? openRegular(join(dir, JOURNAL_FILE)) : undefined;
    try {
      for (const name of names.filter((n) => n !== JOURNAL_FILE).sort()) {
        const rel = `logs/${this.runUuid}/${name}`;
        // A live round opens only the files that grew (a foreach leaves thousands of finished ones).
        if (!final && sizeOf(join(dir, name)) === this.upTo(rel)) continue;
        const f = openRegular(join(dir, name));
        if (!f) continue;
        try {
          await this.shipFile(at.workspace, rel, f.fd, f.size, final, true);
        } finally {
          closeQuietly(f.fd);
        }
      }
      if (journal) await this.shipFile(at.workspace, `logs/${this.runUuid}/${JOURNAL_FILE}`, journal.fd, journal.size, final, true);
      // The final round's chunks leave with the artifacts' (finish).
      if (!final) await this.flush();
    } finally {
      if (journal) closeQuietly(journal.fd);
    }
  }

  /**
   * Ships bytes [sent, size) of a file in chunks; the last one carries `eof` when `final`.
   * `partial`: under the cap, as much as fits is sent (logs); otherwise the whole rest or nothing.
   * False when the file (or its end) was left on the worker.
   */
  private async shipFile(workspace: string, rel: string, fd: number, size: number, final: boolean, partial: boolean): Promise<boolean> {
    if (this.refused) return false;
    const from = this.upTo(rel) ?? 0;
    const room = this.capBytes - this.total;
    let until = Math.max(from, size);
    if (until - from > room) {
      if (!partial || room <= 0) {
        if (final) this.leftBehind.push(rel);
        return false;
      }
      until = from + room;
    }
    if (until === from && !final) return true;
    const buf = Buffer.allocUnsafe(Math.min(FILE_CHUNK_BYTES, Math.max(1, until - from)));
    let offset = from;
    do {
      const want = Math.min(FILE_CHUNK_BYTES, until - offset);
      const bytesRead = want > 0 ? readSync(fd, buf, 0, want, offset) : 0;
      // A file that shrank meanwhile ends here.
      const last = bytesRead < want || offset + bytesRead >= until;
      await this.emit({ workspace, path: rel, offset, data: buf.subarray(0, bytesRead).toString('base64'), eof: final && last }, bytesRead);
      offset += bytesRead;
      if (last) break;
    } while (offset < until);
    if (final && until < size) this.leftBehind.push(rel);
    return until >= size;
  }

  /**
   * The run ended: stops the live rounds, ships the rest of the log folder and every artifact file
   * inside the workspace folder, and rewrites `result`: a shipped artifact names its
   * workspace-relative path (the master makes it its own), one left behind says where it is.
   * False when a send was refused (the attempt was fenced off).
   *
   * `last`, when given, sends the final chunks (possibly none) instead of the shipper's own send,
   * with whatever the caller adds after them — the attempt's end record: one round trip, all or
   * none. A failure of that send is thrown (the caller's error path), not swallowed like a round's.
   */
  async finish(result: TaskResult, workerId: string, last?: SendChunks): Promise<boolean> {
    this.stop();
    const at = await this.where();
    await this.serial(() => this.shipLogs(true, at));
    // The workspace's run-execution.log is shared by its runs: the result carries this run's
    // lines (the master appends them to its own file), the file itself does not travel.
    const inResult = result.execution_log !== undefined ? STATE_FILES.executionLog : undefined;
    await this.serial(async () => {
      if (!at) return;
      try {
        for (const a of result.artifacts) {
          if (this.refused) return;
          const shipped = await this.shipArtifact(at, a.artifact_path, inResult);
          if (shipped) a.artifact_path = shipped;
          else if (shipped === false) a.description = `${a.description ? `${a.description} ` : ''}[not shipped to the master (over distributed.ship_files_max_mb); on worker ${workerId} at ${a.artifact_path}]`;
        }
      } finally {
        this.storage?.close();
        this.storage = undefined;
      }
    });
    if (this.refused) return false;
    if (this.leftBehind.length > 0) {
      result.truncated = true;
      const run = await this.app.repos.runs.getByUuid(this.runUuid);
      // A visible note on the master (GET /event-logs, the run's events): what stayed here, and where.
      const note = {
        topic: 'run.files_truncated', event_id: randomUUID(), name: 'run.files_truncated', source: 'distributed', source_type: 'run', data_type: 'scan',
        data: JSON.stringify({ scan_id: this.runUuid, worker_id: workerId, cap_bytes: this.capBytes, shipped_bytes: this.total, left_on_worker: this.leftBehind.slice(0, 20), left_count: this.leftBehind.length }),
        workspace: run?.workspace ?? '', workflow_name: run?.workflow_name ?? '', processed: true, error: '', created_at: new Date().toISOString(),
      };
      // A run written straight into the master's database gets the note there (its result carries no events).
      if (result.direct) await this.app.repos.events.insert({ ...note, run_id: this.runUuid });
      else result.events.push(note);
      this.log('files left on the worker: over distributed.ship_files_max_mb', { run_uuid: this.runUuid, files: this.leftBehind.slice(0, 20), cap_bytes: this.capBytes });
    }
    if (!last) {
      await this.serial(() => this.flush());
      return !this.refused;
    }
    const chunks = this.batch;
    const reached = this.dropBatch();
    if (!(await last(chunks))) {
      this.refused = true;
      return false;
    }
    for (const [rel, end] of reached) this.sent.set(rel, end);
    return true;
  }

  /** True when object storage holds this file as it is here (the run uploaded it: storage.upload_outputs). */
  private async inStorage(workspace: string, rel: string, real: string): Promise<boolean> {
    if (this.storage === undefined) {
      const settings = this.app.settings().settings;
      try {
        this.storage = uploadsEnabled(settings) ? storageClient(settings) : null;
      } catch {
        this.storage = null;
      }
    }
    if (!this.storage) return false;
    try {
      const obj = await statObject(this.storage, workspaceKeyPrefix(this.storage.cfg.prefix, workspace) + rel);
      return Boolean(obj && (await sameContent(real, obj)));
    } catch {
      return false;
    }
  }

  /**
   * The workspace-relative path of an artifact once shipped; false when left behind (cap);
   * undefined when not a shippable file. `inResult`: the path whose content the result carries
   * (named, not shipped).
   */
  private async shipArtifact(at: { workspace: string; root: string }, path: string, inResult?: string): Promise<string | false | undefined> {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return undefined;
    }
    if (!isInside(at.root, real) || real === at.root) return undefined;
    const rel = relative(at.root, real);
    if (!isShippablePath(rel)) return undefined;
    if (rel === inResult) return rel;
    // Already sent whole (a log file registered as an artifact).
    const f = openRegular(real);
    if (!f) return undefined;
    try {
      const done = this.upTo(rel);
      if (done !== undefined && done >= f.size) return rel;
      // Uploaded by the run (storage.upload_outputs): a reference instead of the bytes.
      if (await this.inStorage(at.workspace, rel, real)) {
        await this.emit({ workspace: at.workspace, path: rel, offset: 0, data: '', eof: true, stored: true }, 0);
        this.stored.push(rel);
        return rel;
      }
      return (await this.shipFile(at.workspace, rel, f.fd, f.size, true, false)) ? rel : false;
    } finally {
      closeQuietly(f.fd);
    }
  }
}
