import { describe, expect, it } from 'vitest';
import { failureText, runProgram, runShell } from '../../../src/registry/exec.js';
import { processesWith } from '../../helpers/cli.js';


describe('installer processes (execa)', () => {
  it('keeps interleaved output and the exit status', async () => {
    const r = await runShell('echo out; echo err >&2; exit 3', { timeoutMs: 10_000 });
    expect(r).toMatchObject({ code: 3, signal: null, timedOut: false });
    expect(r.output).toContain('out\n');
    expect(r.output).toContain('err\n');
    expect(failureText(r, 10_000)).toBe('exit status 3: err');
  });

  it('reports a program that cannot start instead of throwing', async () => {
    const r = await runProgram('/nonexistent/osm-no-such-program', [], { timeoutMs: 10_000 });
    expect(r.code).toBeNull();
    expect(r.output).toMatch(/ENOENT/);
    expect(failureText(r, 10_000)).toMatch(/^could not start/);
  });

  it('a timeout kills the whole process group, children included', async () => {
    const marker = `osm-exec-timeout-${process.pid}-${Date.now()}`;
    const started = Date.now();
    const r = await runShell(`sh -c 'sleep 30; true' ${marker} & sh -c 'sleep 30; true' ${marker}`, { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(failureText(r, 500)).toBe('timed out after 1s');
    const end = Date.now() + 5000;
    while (processesWith(marker).length && Date.now() < end) await new Promise((ok) => setTimeout(ok, 100));
    expect(processesWith(marker)).toEqual([]);
  });
});
