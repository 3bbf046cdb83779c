import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LineSplitter, MAX_PARTIAL_LINE } from '../../../src/engine/live/line-splitter.js';
import { formatFile, formatLines, formatStep, JOURNAL_FILE, parseRecord } from '../../../src/engine/live/journal.js';
import { liveRunOutput, RunOutput, type LiveEvent } from '../../../src/engine/live/run-output.js';
import { RunLogReader, type LogEvent } from '../../../src/engine/live/log-reader.js';
import { cleanToolLine, progressText } from '../../../src/engine/printer-live.js';
import { tempDir } from '../../helpers/tmp.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir('osm-live-unit-'));
});
afterEach(() => cleanup());

async function readAll(folder: string, after = 0): Promise<LogEvent[]> {
  const r = new RunLogReader(folder);
  const out: LogEvent[] = [];
  try {
    for (;;) {
      const got = await r.read(after);
      for (const e of got.events) {
        out.push(e);
        after = e.seq;
      }
      if (!got.more) return out;
    }
  } finally {
    await r.close();
  }
}

const show = (events: LogEvent[]) => events.map((e) => (e.kind === 'line' ? `${e.seq} ${e.step} ${e.stream} ${e.line}` : `${e.seq} ${e.step} ${e.status}`));

describe('LineSplitter', () => {
  it('gives whole lines only, keeps the partial one, and ends a last line without newline', () => {
    const s = new LineSplitter();
    expect(s.push(Buffer.from('ab'))).toBeUndefined();
    expect(s.push(Buffer.from('c\nde'))?.toString()).toBe('abc\n');
    expect(s.push(Buffer.from('f\ng\nh'))?.toString()).toBe('def\ng\n');
    expect(s.flush()?.toString()).toBe('h\n');
    expect(s.flush()).toBeUndefined();
  });

  it('copies what it holds (callers reuse their buffers) and cuts an endless line', () => {
    const s = new LineSplitter();
    const buf = Buffer.from('abc');
    s.push(buf);
    buf.write('XYZ');
    expect(s.flush()?.toString()).toBe('abc\n');
    const huge = s.push(Buffer.alloc(MAX_PARTIAL_LINE + 10, 'x'));
    expect(huge?.length).toBe(MAX_PARTIAL_LINE + 11);
    expect(huge?.[huge.length - 1]).toBe(10);
  });
});

describe('journal records', () => {
  it('round-trip', () => {
    expect(parseRecord(formatFile(3, '0004-scan.log', 'scan "x"').trim())).toEqual({ type: 'F', file: 3, name: '0004-scan.log', step: 'scan "x"' });
    expect(parseRecord(formatLines({ seq: 9, file: 3, stream: 'stderr', start: 10, end: 30, count: 2, ts: 5 }).trim())).toEqual({ type: 'L', seq: 9, file: 3, stream: 'stderr', start: 10, end: 30, count: 2, ts: 5 });
    expect(parseRecord(formatStep(4, 7, { step: 's', status: 'failed', exit_code: 2, duration_ms: 12 }).trim())).toMatchObject({ type: 'S', seq: 4, ts: 7, step: 's', status: 'failed', exit_code: 2, duration_ms: 12 });
  });

  it('refuses file names that leave the folder and malformed records', () => {
    for (const bad of ['F 0 ../../etc/passwd "x"', 'F 0 /etc/passwd "x"', 'F 0 a/b.log "x"', 'F 0 .. "x"', 'L 1 0 o 10 5 1 0', 'L 1 0 x 0 5 1 0', 'L -1 0 o 0 5 1 0', 'L 1 0 o 0 5 0 0', 'S 1 2 {"step":1}', 'S 1 2 {"step":"a","status":"weird"}', 'Q 1']) {
      expect(parseRecord(bad), bad).toBeUndefined();
    }
  });
});

describe('journal records: the parallel-steps child of a lines record', () => {
  it('round-trips the substep (names with spaces and quotes too); a record of an older osm has none', () => {
    const rec = { seq: 2, file: 0, stream: 'stdout' as const, start: 0, end: 10, count: 1, ts: 7 };
    expect(formatLines(rec)).toBe('L 2 0 o 0 10 1 7\n');
    expect(formatLines({ ...rec, part: 'left' })).toBe('L 2 0 o 0 10 1 7 "left"\n');
    expect(parseRecord(formatLines({ ...rec, part: 'left' }).trim())).toEqual({ type: 'L', ...rec, part: 'left' });
    expect(parseRecord(formatLines({ ...rec, part: 'outer/in "ner" x' }).trim())).toEqual({ type: 'L', ...rec, part: 'outer/in "ner" x' });
    expect(parseRecord('L 2 0 o 0 10 1 7')).toEqual({ type: 'L', ...rec });
    expect(parseRecord('L 2 0 o 0 10 1 7')).not.toHaveProperty('part');
  });

  it('refuses a malformed substep', () => {
    for (const bad of ['L 2 0 o 0 10 1 7 left', 'L 2 0 o 0 10 1 7 ""', 'L 2 0 o 0 10 1 7 3', 'L 2 0 o 0 10 1 7 "a', `L 2 0 o 0 10 1 7 ${JSON.stringify('x'.repeat(2000))}`]) {
      expect(parseRecord(bad), bad).toBeUndefined();
    }
  });

  it('journals the child of a sink and reads it back; hasStep knows steps, children and nothing else', async () => {
    const out = new RunOutput('');
    out.useDir(dir);
    const hook = join(dir, '0001-warmup.log');
    const log = join(dir, '0002-group.log');
    out.openStep(hook, 'warmup');
    out.append(hook, 1, 'warm\n');
    out.openStep(log, 'group');
    out.step({ step: 'group', status: 'running', exit_code: null, duration_ms: 0 });
    const left = out.sink(log, 'left');
    const right = out.sink(log, 'right');
    left.write(1, Buffer.from('l1\n'));
    right.write(2, Buffer.from('r1\n'));
    out.append(log, 1, 'own\n');
    left.end();
    right.end();
    out.close();
    const all = await readAll(dir);
    expect(all.filter((e) => e.kind === 'line').map((e) => [e.step, (e as { part?: string }).part ?? '-', e.line])).toEqual([
      ['warmup', '-', 'warm'],
      ['group', 'left', 'l1'],
      ['group', 'right', 'r1'],
      ['group', '-', 'own'],
    ]);
    const r = new RunLogReader(dir);
    try {
      for (const name of ['warmup', 'group', 'left', 'right']) expect(await r.hasStep(name), name).toBe(true);
      for (const name of ['nosuch', 'l1', '']) expect(await r.hasStep(name), name).toBe(false);
      // The tail of one child: its last line only.
      expect(await r.tailStart(1, 'left')).toBe(2);
    } finally {
      await r.close();
    }
  });

  it('reads an older journal (no substep field) as before', async () => {
    writeFileSync(join(dir, '0001-group.log'), 'l1\nr1\n');
    writeFileSync(join(dir, JOURNAL_FILE), 'F 0 0001-group.log "group"\nL 1 0 o 0 3 1 5\nL 2 0 e 3 6 1 6\n');
    const all = await readAll(dir);
    expect(show(all)).toEqual(['1 group stdout l1', '2 group stderr r1']);
    expect(all.some((e) => 'part' in e)).toBe(false);
  });
});

describe('RunOutput and RunLogReader', () => {
  it('writes whole lines per command, journals them with one sequence, and reads them back from any point', async () => {
    const out = new RunOutput('unit-run-1');
    out.useDir(dir);
    const heard: LiveEvent[] = [];
    out.subscribe((e) => heard.push(e));
    const log = join(dir, '0001-scan.log');
    out.openStep(log, 'scan');
    out.step({ step: 'scan', status: 'running', exit_code: null, duration_ms: 0 });
    const a = out.sink(log);
    const b = out.sink(log);
    a.write(1, Buffer.from('a1\na2-par'));
    b.write(2, Buffer.from('b-err\n'));
    a.write(1, Buffer.from('t\n'));
    a.write(1, Buffer.from('no-newline'));
    a.end();
    b.end();
    out.step({ step: 'scan', status: 'completed', exit_code: 0, duration_ms: 5 });
    out.append(join(dir, '0002-probe.log'), 1, 'p1\np2');
    expect(liveRunOutput('unit-run-1')).toBe(out);
    out.close();
    expect(liveRunOutput('unit-run-1')).toBeUndefined();

    expect(readFileSync(log, 'utf8')).toBe('a1\nb-err\na2-part\nno-newline\n');
    expect(out.linesOf(log)).toBe(4);
    const all = await readAll(dir);
    expect(show(all)).toEqual([
      '1 scan running',
      '2 scan stdout a1',
      '3 scan stderr b-err',
      '4 scan stdout a2-part',
      '5 scan stdout no-newline',
      '6 scan completed',
      '7 probe stdout p1',
      '8 probe stdout p2',
    ]);
    // Listeners heard the same, in the same order.
    expect(heard.filter((e) => e.kind !== 'run').map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(show(await readAll(dir, 4))).toEqual(show(all).slice(4));
    const r = new RunLogReader(dir);
    expect(await r.tailStart(2)).toBe(6);
    expect(await r.tailStart(1, 'scan')).toBe(4);
    expect(await r.tailStart(0)).toBe(8);
    expect(await r.tailStart(99)).toBe(0);
    await r.close();
  });

  it('reads lines appended while it follows, and nothing twice', async () => {
    const out = new RunOutput('unit-run-2');
    out.useDir(dir);
    const log = join(dir, '0001-s.log');
    out.openStep(log, 's');
    let pings = 0;
    const stop = out.watch(() => pings++);
    const reader = new RunLogReader(dir);
    out.append(log, 1, 'one\n');
    const first = await reader.read(0);
    expect(show(first.events)).toEqual(['1 s stdout one']);
    expect((await reader.read(1)).events).toEqual([]);
    out.append(log, 2, 'two\n');
    expect(show((await reader.read(1)).events)).toEqual(['2 s stderr two']);
    expect(pings).toBe(2);
    stop();
    expect(out.watcherCount).toBe(0);
    await reader.close();
    out.close();
  });

  it('never reads outside the log folder: hostile journal names, links and bad ranges', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'TOP-SECRET\n');
    const logs = join(dir, 'logs');
    mkdirSync(logs);
    symlinkSync(join(outside, 'secret.txt'), join(logs, '0001-link.log'));
    writeFileSync(join(logs, '0002-ok.log'), 'fine\n');
    writeFileSync(
      join(logs, JOURNAL_FILE),
      [
        'F 0 ../outside/secret.txt "evil"',
        'L 1 0 o 0 11 1 0',
        'F 1 0001-link.log "link"',
        'L 2 1 o 0 11 1 0',
        'F 2 0002-ok.log "ok"',
        'L 3 2 o 0 999 1 0',
        '',
      ].join('\n'),
    );
    const events = await readAll(logs);
    expect(events.map((e) => (e.kind === 'line' ? e.line : ''))).toEqual(['fine']);
    expect(JSON.stringify(events)).not.toContain('TOP-SECRET');
  });

  it('reads an older run without a journal from its step files, in name order, never following links', async () => {
    writeFileSync(join(dir, '0001-first.log'), 'a\nb\n');
    writeFileSync(join(dir, '0002-second.log'), 'c');
    writeFileSync(join(dir, 'elsewhere.txt'), 'LINKED\n');
    symlinkSync(join(dir, 'elsewhere.txt'), join(dir, '0003-link.log'));
    const r = new RunLogReader(dir);
    expect(await r.tailStart(1)).toBe(2);
    await r.close();
    const events = await readAll(dir);
    expect(show(events)).toEqual(['1 first stdout a', '2 first stdout b', '3 second stdout c']);
    expect(show(await readAll(dir, 2))).toEqual(['3 second stdout c']);
  });
});

describe('terminal helpers', () => {
  it('keeps only colours of tool output, and only with colours on', () => {
    const line = '\u001b]0;title\u0007a\u001b[31mred\u001b[0m\u001b[2J\u001b[Hb\u0008c';
    expect(cleanToolLine(line, false)).toBe('aredbc');
    expect(cleanToolLine(line, true)).toBe('a\u001b[31mred\u001b[0mbc');
    expect(cleanToolLine('10%\r50%\r100%', false)).toBe('100%');
    expect(cleanToolLine('done\r', false)).toBe('done');
    expect(cleanToolLine('tab\there', false)).toBe('tab\there');
  });

  it('words progress with done/total, rate and ETA', () => {
    const p = { done: 50, total: 200, started: 0, lastLine: 0, lines: 0 };
    expect(progressText('fan', p, 10_000, false)).toBe('fan: 50/200 (25%) · 5.0/s · ETA 30s');
    expect(progressText('fan', p, 10_000, true)).toBe('fan ▕█████░░░░░░░░░░░░░░░▏ 50/200 · 5.0/s · ETA 30s');
    expect(progressText('fan', { ...p, total: undefined }, 10_000, false)).toBe('fan: 50/? · 5.0/s');
  });
});
