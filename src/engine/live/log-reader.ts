/**
 * Reads a run's output back from its log folder, from any point of its sequence: the journal says
 * which bytes of which step log file hold each line (journal.ts), the files hold the lines. Used by
 * the daemon's log streams (backfill, then what is new as it is written) and by `osm logs`.
 *
 * The folder's content is not trusted (a snapshot may have brought it): file names must be plain
 * names of the folder, files are opened without following a final link and must be regular files,
 * offsets are read as they are (a bad range yields what is there), lines are capped in length.
 * Reads are asynchronous and bounded per call, so a huge log never blocks or fills the daemon.
 */
import { constants as fsc } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { isSafeName } from '../../util/fs-safe.js';
import { join } from 'node:path';
import { JOURNAL_FILE, parseRecord, type JournalRecord, type LinesRecord } from './journal.js';
import type { LiveLine, LiveStep } from './run-output.js';

export type LogEvent = LiveLine | LiveStep;

/** Longest line handed out; the rest of a longer one is replaced by a note (the file keeps it). */
export const MAX_LINE = 1024 * 1024;

/** Bytes of log files read per `read` call at most (the caller loops while `more`). */
const READ_BUDGET = 256 * 1024;

interface OpenFile {
  name: string;
  step: string;
  fh?: FileHandle;
  missing?: boolean;
  /** Bytes read ahead (from `at`): the next records of a busy step are usually right after. */
  ahead?: { at: number; buf: Buffer };
}

/** Read-ahead of a step log file: one read serves many small records (foreach items). */
const READ_AHEAD = 64 * 1024;

interface InRecord {
  rec: LinesRecord;
  pos: number;
  line: number;
  carry: Buffer[];
}

function capLine(text: string): string {
  if (text.length <= MAX_LINE) return text;
  return `${text.slice(0, MAX_LINE)}… [${text.length - MAX_LINE} more characters in the step log file]`;
}

async function openRegular(path: string): Promise<FileHandle | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if ((await fh.stat()).isFile()) return fh;
  } catch {
    /* fall through */
  }
  await fh.close().catch(() => undefined);
  return undefined;
}

/** Incremental reader of one run's journal and step log files. Call `close()` when done. */
export class RunLogReader {
  private journal?: FileHandle;
  private journalMissing = false;
  private journalOffset = 0;
  private journalRest = '';
  private readonly journalBuf = Buffer.allocUnsafe(256 * 1024);
  private readonly pending: JournalRecord[] = [];
  private readonly files = new Map<number, OpenFile>();
  private current?: InRecord;
  private closed = false;
  /** A folder without a journal (output recorded by an older osm): records made up from its files. */
  private legacy = false;

  constructor(readonly dir: string) {}

  /** True once the folder turned out to hold no journal (output recorded by an older osm). */
  get isLegacy(): boolean {
    return this.legacy;
  }

  /**
   * The next events with a sequence number above `after`, in order. `more` is true when the budget
   * ran out before the end of what is written now; false means caught up (call again later to
   * follow a running run).
   */
  async read(after: number): Promise<{ events: LogEvent[]; more: boolean }> {
    const events: LogEvent[] = [];
    if (this.closed) return { events, more: false };
    await this.noJournal();
    let budget = READ_BUDGET;
    for (;;) {
      if (this.current) {
        budget = await this.continueRecord(after, events, budget);
        if (this.current) return { events, more: true };
      }
      let rec = this.pending.shift();
      if (!rec) {
        const got = await this.readJournal();
        if (!got) return { events, more: false };
        rec = this.pending.shift();
        if (!rec) continue;
      }
      if (rec.type === 'F') {
        if (!this.files.has(rec.file)) this.files.set(rec.file, { name: rec.name, step: rec.step });
      } else if (rec.type === 'S') {
        if (rec.seq > after) {
          const { type: _t, ...state } = rec;
          events.push({ ...state, kind: 'step' });
        }
      } else if (rec.seq + rec.count - 1 > after) {
        this.current = { rec, pos: rec.start, line: 0, carry: [] };
      }
      if (budget <= 0 || events.length >= 5000) return { events, more: true };
    }
  }

  /**
   * The sequence number after which the last `n` lines (of `step`, when given) begin; for `n` 0,
   * the last sequence number written (only what comes next).
   */
  async tailStart(n: number, step?: string): Promise<number> {
    const probe = new RunLogReader(this.dir);
    try {
      // Only the journal is read: line counts per record say where the tail starts.
      await probe.noJournal();
      const names = new Map<number, string>();
      const records: LinesRecord[] = [];
      let last = 0;
      const take = () => {
        for (const r of probe.pending.splice(0)) {
          if (r.type === 'F') names.set(r.file, r.step);
          else {
            last = Math.max(last, r.type === 'L' ? r.seq + r.count - 1 : r.seq);
            if (r.type === 'L' && (!step || names.get(r.file) === step || r.part === step)) records.push(r);
          }
        }
      };
      take();
      while (await probe.readJournal()) take();
      if (n <= 0) return last;
      let left = n;
      for (let i = records.length - 1; i >= 0; i--) {
        const r = records[i]!;
        if (r.count >= left) return r.seq + (r.count - left) - 1;
        left -= r.count;
      }
      return 0;
    } finally {
      await probe.close();
    }
  }

  /**
   * True when the journal names `step`: a step log file's step, a step state change, or a
   * parallel-steps child that wrote lines (hook steps have log files but no step rows).
   */
  async hasStep(step: string): Promise<boolean> {
    const probe = new RunLogReader(this.dir);
    try {
      await probe.noJournal();
      const found = () => probe.pending.splice(0).some((r) => (r.type === 'L' ? r.part === step : r.step === step));
      if (found()) return true;
      while (await probe.readJournal()) if (found()) return true;
      return false;
    } finally {
      await probe.close();
    }
  }

  /** Closes every open file. */
  async close(): Promise<void> {
    this.closed = true;
    const handles = [this.journal, ...[...this.files.values()].map((f) => f.fh)].filter((h): h is FileHandle => Boolean(h));
    this.journal = undefined;
    for (const f of this.files.values()) f.fh = undefined;
    await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
  }

  /** True when the folder has no journal (checked once; a journal appearing later is then ignored). */
  private async noJournal(): Promise<boolean> {
    if (this.journal) return false;
    if (this.journalMissing) return true;
    const fh = await openRegular(join(this.dir, JOURNAL_FILE));
    if (fh) {
      this.journal = fh;
      return false;
    }
    // A run that has not written anything yet has no journal either: only a folder holding step
    // logs without one is an older run's. Its files become records: each file one step, its lines
    // counted (streamed, never held whole), all of them stdout (older runs did not tell).
    let names: string[] = [];
    try {
      names = (await readdir(this.dir)).filter((n) => /^\d{4}-.+\.log$/.test(n) && isSafeName(n)).sort();
    } catch {
      names = [];
    }
    if (names.length === 0) return false;
    this.journalMissing = true;
    this.legacy = true;
    let seq = 1;
    for (const [file, name] of names.entries()) {
      const fh = await openRegular(join(this.dir, name));
      if (!fh) continue;
      try {
        const st = await fh.stat();
        const count = await countLines(fh, st.size);
        this.pending.push({ type: 'F', file, name, step: name.replace(/^\d{4}-/, '').replace(/\.log$/, '') });
        if (count > 0) this.pending.push({ type: 'L', seq, file, stream: 'stdout', start: 0, end: st.size, count, ts: Math.round(st.mtimeMs) });
        seq += count;
      } finally {
        await fh.close().catch(() => undefined);
      }
    }
    return true;
  }

  /** Reads new journal bytes into `pending`; false when there was nothing new. */
  private async readJournal(): Promise<boolean> {
    if (!this.journal) {
      if (this.journalMissing) return false;
      this.journal = await openRegular(join(this.dir, JOURNAL_FILE));
      if (!this.journal) return false;
    }
    const buf = this.journalBuf;
    const { bytesRead } = await this.journal.read(buf, 0, buf.length, this.journalOffset);
    if (bytesRead <= 0) return false;
    this.journalOffset += bytesRead;
    const text = this.journalRest + buf.subarray(0, bytesRead).toString('utf8');
    const lines = text.split('\n');
    this.journalRest = lines.pop() ?? '';
    for (const l of lines) {
      const r = parseRecord(l);
      if (r) this.pending.push(r);
    }
    return true;
  }

  private async fileOf(index: number): Promise<OpenFile | undefined> {
    const f = this.files.get(index);
    if (!f || f.missing) return f;
    if (!f.fh) {
      f.fh = await openRegular(join(this.dir, f.name));
      if (!f.fh) f.missing = true;
    }
    return f;
  }

  /** Reads (part of) the lines record in progress; returns the budget left. */
  private async continueRecord(after: number, events: LogEvent[], budget: number): Promise<number> {
    const cur = this.current!;
    const { rec } = cur;
    const file = await this.fileOf(rec.file);
    const emit = (text: string) => {
      const seq = rec.seq + cur.line;
      cur.line++;
      if (seq > after && cur.line <= rec.count) events.push({ kind: 'line', seq, step: file?.step ?? '', ...(rec.part ? { part: rec.part } : {}), stream: rec.stream, line: capLine(text), ts: rec.ts });
    };
    if (!file?.fh) {
      this.current = undefined;
      return budget;
    }
    while (cur.pos < rec.end && budget > 0) {
      const want = Math.min(rec.end - cur.pos, Math.max(budget, 64 * 1024));
      const got = await this.bytes(file, cur.pos, want);
      const bytesRead = got.length;
      if (bytesRead <= 0) break;
      cur.pos += bytesRead;
      budget -= bytesRead;
      let chunk = got;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10)) {
        const head = chunk.subarray(0, nl);
        emit((cur.carry.length ? Buffer.concat([...cur.carry, head]) : head).toString('utf8'));
        cur.carry = [];
        chunk = chunk.subarray(nl + 1);
      }
      if (chunk.length) cur.carry.push(Buffer.from(chunk));
      if (bytesRead < want) break;
    }
    if (cur.pos >= rec.end || budget > 0) {
      // The record is done (or its file is shorter than the journal says: keep what is there).
      if (cur.carry.length) emit(Buffer.concat(cur.carry).toString('utf8'));
      this.current = undefined;
    }
    return budget;
  }

  /** Up to `want` bytes of a file from `pos`, through its read-ahead window. */
  private async bytes(file: OpenFile, pos: number, want: number): Promise<Buffer> {
    const a = file.ahead;
    if (a && pos >= a.at && pos + want <= a.at + a.buf.length) return a.buf.subarray(pos - a.at, pos - a.at + want);
    const size = Math.max(want, READ_AHEAD);
    const buf = Buffer.allocUnsafe(size);
    const { bytesRead } = await file.fh!.read(buf, 0, size, pos);
    file.ahead = { at: pos, buf: buf.subarray(0, bytesRead) };
    return file.ahead.buf.subarray(0, Math.min(want, bytesRead));
  }
}

/** Lines in the first `size` bytes of a file (a last line without newline included). */
async function countLines(fh: FileHandle, size: number): Promise<number> {
  const buf = Buffer.allocUnsafe(256 * 1024);
  let n = 0;
  let last = 10;
  for (let pos = 0; pos < size; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos);
    if (bytesRead <= 0) break;
    const chunk = buf.subarray(0, bytesRead);
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
    last = chunk[bytesRead - 1]!;
    pos += bytesRead;
  }
  return n + (size > 0 && last !== 10 ? 1 : 0);
}
