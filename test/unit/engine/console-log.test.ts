/** The console log a run tees into: lines of one event-loop turn go in one write, in order, none lost. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RunPrinter } from '../../../src/engine/printer.js';
import { tempDir } from '../../helpers/tmp.js';

const { dir, cleanup } = tempDir('osm-console-log-');
afterAll(cleanup);

describe('console log', () => {
  it('keeps every line in order across turns of the event loop and a detach mid-turn', async () => {
    const file = path.join(dir, 'run-console.log');
    const p = new RunPrinter({ stdout: false, silent: true, color: false });
    await p.attachConsoleLog(file, true);
    const expected: string[] = [];
    for (let turn = 0; turn < 5; turn++) {
      for (let i = 0; i < 40; i++) {
        p.line(`turn ${turn} line ${i}`);
        expected.push(`turn ${turn} line ${i}`);
      }
      await new Promise((r) => setImmediate(r));
    }
    p.line('last, written right before the detach');
    expected.push('last, written right before the detach');
    await p.detachConsoleLog();
    expect(readFileSync(file, 'utf8')).toBe(`${expected.join('\n')}\n`);
  });

  it('writes the lines of one turn with one write', async () => {
    const file = path.join(dir, 'batched.log');
    const p = new RunPrinter({ stdout: false, silent: true, color: false });
    await p.attachConsoleLog(file, true);
    const stream = (p as unknown as { consoleLog: import('node:fs').WriteStream }).consoleLog;
    // Once the file is open (writes before that are held by the stream anyway).
    await new Promise<void>((r) => stream.once('ready', () => r()));
    const writev = vi.spyOn(stream as unknown as { _writev: (...a: unknown[]) => void }, '_writev');
    const write = vi.spyOn(stream as unknown as { _write: (...a: unknown[]) => void }, '_write');
    for (let i = 0; i < 10; i++) p.line(`line ${i}`);
    await new Promise((r) => setImmediate(r));
    await p.detachConsoleLog();
    expect(writev.mock.calls.length + write.mock.calls.length).toBe(1);
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(10);
  });
});
