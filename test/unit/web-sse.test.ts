/** The dashboard's reading of the live streams: the SSE wire format and the change messages. */
import { describe, expect, it } from 'vitest';
import { sseParser, type SseMessage } from '../../web/src/lib/sse-parse.js';
import { parseChange } from '../../web/src/lib/live-change.js';

function parseAll(chunks: string[]): SseMessage[] {
  const out: SseMessage[] = [];
  const feed = sseParser((m) => out.push(m));
  for (const c of chunks) feed(c);
  return out;
}

describe('sseParser', () => {
  it('reads events, data, ids and comments, whatever the chunking and line endings', () => {
    const text = ': keep-alive\n\nid: 7\nevent: line\ndata: {"step":"a","line":"x"}\n\nevent: end\r\ndata: {"status":"completed"}\r\n\r\n';
    const whole = parseAll([text]);
    expect(whole).toEqual([
      { event: 'line', data: '{"step":"a","line":"x"}', id: '7' },
      { event: 'end', data: '{"status":"completed"}', id: '7' },
    ]);
    // One byte at a time gives the same messages.
    expect(parseAll([...text])).toEqual(whole);
  });

  it('joins multi-line data and defaults the event name to message', () => {
    expect(parseAll(['data: one\ndata: two\n\n'])).toEqual([{ event: 'message', data: 'one\ntwo', id: undefined }]);
  });

  it('waits for the blank line before delivering a message', () => {
    expect(parseAll(['event: line\ndata: {}\n'])).toEqual([]);
  });
});

describe('parseChange', () => {
  it('tells run summaries from step changes and ignores the rest', () => {
    expect(parseChange('{"id":3,"run_uuid":"u","status":"running","completed_steps":1,"total_steps":4}')).toMatchObject({ kind: 'run', status: 'running' });
    expect(parseChange('{"run_uuid":"u","step_name":"s","status":"failed","exit_code":2}')).toMatchObject({ kind: 'step', step_name: 's', exit_code: 2 });
    expect(parseChange('{"topic":"asset.discovered"}')).toBeUndefined();
    expect(parseChange('not json')).toBeUndefined();
    expect(parseChange('null')).toBeUndefined();
  });
});
