/**
 * The JSON-lines log of `osm serve` and `osm worker join`: what a short window logs leaves in one
 * write to stdout (a synchronous system call on a pipe or terminal), in order.
 */
import { describe, expect, it } from 'vitest';
import { jsonLineLog, LOG_WINDOW_MS } from '../../../src/util/json-log.js';

const windowPassed = () => new Promise((r) => setTimeout(r, LOG_WINDOW_MS + 30));

describe('jsonLineLog', () => {
  it('writes the lines of a window in one write, in order, after it', async () => {
    const writes: string[] = [];
    const log = jsonLineLog({ write: (s: string) => writes.push(s) });
    log('task started', { run_uuid: 'a' });
    log('task finished', { run_uuid: 'a', status: 'completed' });
    log('worker leaving');
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([]);
    await windowPassed();
    expect(writes).toHaveLength(1);
    const lines = writes[0]!.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      { level: 30, time: expect.any(Number), msg: 'task started', run_uuid: 'a' },
      { level: 30, time: expect.any(Number), msg: 'task finished', run_uuid: 'a', status: 'completed' },
      { level: 30, time: expect.any(Number), msg: 'worker leaving' },
    ]);
    log('next turn');
    await windowPassed();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!)).toMatchObject({ msg: 'next turn' });
  });
});
