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
import { constants as fsc } from 'node:fs';
import { lstat, open, readdir, realpath, type FileHandle } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { AppContext } from '../services/context.js';
import { JOURNAL_FILE } from '../engine/live/journal.js';
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

/** Sends one chunk, fenced: false when refused (the lease was lost or a newer attempt started). */
export type SendChunk = (chunk: FileChunk) => Promise<boolean>;

/** A fenced send was refused: nothing more of this attempt is shipped. */
class Refused extends Error {}

async function openRegular(path: string): Promise<{ fh: FileHandle; size: number } | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await fh.stat();
    if (st.isFile()) return { fh, size: st.size };
  } catch {
    /* not readable */
  }
  await fh.close().catch(() => undefined);
  return undefined;
}

/** Ships one run's files from its worker; `round()` while it runs, `finish()` when it ended. */
export class FileShipper {
  /** Bytes of each file (workspace-relative path) shipped so far. */
  private readonly sent = new Map<string, number>();
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
    private readonly send: SendChunk,
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

  private serial<T>(fn: () => Promise<T>): Promise<T | undefined> {
    const next = this.chain.then(fn).catch((err: unknown) => {
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
      return { workspace: run.workspace, root: await realpath(await workspaceRoot(this.app, run.workspace)) };
    } catch {
      return undefined;
    }
  }

  /**
   * One round over the log folder. The journal's size is taken first and the step log files are
   * shipped before it, so every journal record the master holds names bytes it holds too.
   */
  private async shipLogs(final: boolean): Promise<void> {
    if (this.refused) return;
    const at = await this.where();
    if (!at || !isSafeName(this.runUuid)) return;
    const dir = join(at.root, 'logs', this.runUuid);
    let names: string[];
    try {
      names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile() && isSafeName(d.name)).map((d) => d.name);
    } catch {
      return;
    }
    const journal = names.includes(JOURNAL_FILE) ? await openRegular(join(dir, JOURNAL_FILE)) : undefined;
    try {
      for (const name of names.filter((n) => n !== JOURNAL_FILE).sort()) {
        const rel = `logs/${this.runUuid}/${name}`;
        // A live round opens only the files that grew (a foreach leaves thousands of finished ones).
        if (!final && (await lstat(join(dir, name)).catch(() => undefined))?.size === this.sent.get(rel)) continue;
        const f = await openRegular(join(dir, name));
        if (!f) continue;
        try {
          await this.shipFile(at.workspace, rel, f.fh, f.size, final, true);
        } finally {
          await f.fh.close().catch(() => undefined);
        }
      }
      if (journal) await this.shipFile(at.workspace, `logs/${this.runUuid}/${JOURNAL_FILE}`, journal.fh, journal.size, final, true);
    } finally {
      await journal?.fh.close().catch(() => undefined);
    }
  }

  /**
   * Ships bytes [sent, size) of a file in chunks; the last one carries `eof` when `final`.
   * `partial`: under the cap, as much as fits is sent (logs); otherwise the whole rest or nothing.
   * False when the file (or its end) was left on the worker.
   */
  private async shipFile(workspace: string, rel: string, fh: FileHandle, size: number, final: boolean, partial: boolean): Promise<boolean> {
    if (this.refused) return false;
    const from = this.sent.get(rel) ?? 0;
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
      const { bytesRead } = want > 0 ? await fh.read(buf, 0, want, offset) : { bytesRead: 0 };
      // A file that shrank meanwhile ends here.
      const last = bytesRead < want || offset + bytesRead >= until;
      const ok = await this.send({ workspace, path: rel, offset, data: buf.subarray(0, bytesRead).toString('base64'), eof: final && last });
      if (!ok) throw new Refused();
      offset += bytesRead;
      this.total += bytesRead;
      this.sent.set(rel, offset);
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
   */
  async finish(result: TaskResult, workerId: string): Promise<boolean> {
    this.stop();
    await this.serial(() => this.shipLogs(true));
    await this.serial(async () => {
      const at = await this.where();
      if (!at) return;
      try {
        for (const a of result.artifacts) {
          if (this.refused) return;
          const shipped = await this.shipArtifact(at, a.artifact_path);
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
      result.events.push({
        topic: 'run.files_truncated', event_id: randomUUID(), name: 'run.files_truncated', source: 'distributed', source_type: 'run', data_type: 'scan',
        data: JSON.stringify({ scan_id: this.runUuid, worker_id: workerId, cap_bytes: this.capBytes, shipped_bytes: this.total, left_on_worker: this.leftBehind.slice(0, 20), left_count: this.leftBehind.length }),
        workspace: run?.workspace ?? '', workflow_name: run?.workflow_name ?? '', processed: true, error: '', created_at: new Date().toISOString(),
      });
      this.log('files left on the worker: over distributed.ship_files_max_mb', { run_uuid: this.runUuid, files: this.leftBehind.slice(0, 20), cap_bytes: this.capBytes });
    }
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

  /** The workspace-relative path of an artifact once shipped; false when left behind (cap); undefined when not a shippable file. */
  private async shipArtifact(at: { workspace: string; root: string }, path: string): Promise<string | false | undefined> {
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      return undefined;
    }
    if (!isInside(at.root, real) || real === at.root) return undefined;
    const rel = relative(at.root, real);
    if (!isShippablePath(rel)) return undefined;
    // Already sent whole (a log file registered as an artifact).
    const f = await openRegular(real);
    if (!f) return undefined;
    try {
      const done = this.sent.get(rel);
      if (done !== undefined && done >= f.size) return rel;
      // Uploaded by the run (storage.upload_outputs): a reference instead of the bytes.
      if (await this.inStorage(at.workspace, rel, real)) {
        if (!(await this.send({ workspace: at.workspace, path: rel, offset: 0, data: '', eof: true, stored: true }))) throw new Refused();
        this.stored.push(rel);
        return rel;
      }
      return (await this.shipFile(at.workspace, rel, f.fh, f.size, true, false)) ? rel : false;
    } finally {
      await f.fh.close().catch(() => undefined);
    }
  }
}
