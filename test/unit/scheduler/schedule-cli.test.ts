/** `osm schedule …` driven through the real commander program, in-process, with --json output. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { createAppContext } from '../../../src/services/context.js';
import { tempDir } from '../../helpers/tmp.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir('osm-test-'));
  process.exitCode = undefined;
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  cleanup();
});

async function osm(...args: string[]): Promise<{ out: string; err: string; code: number }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
  const before = { out: process.stdout.listeners('error'), err: process.stderr.listeners('error') };
  try {
    await main(['node', 'osm', '-b', dir, ...args]);
  } finally {
    vi.restoreAllMocks();
    // main() adds EPIPE handlers to the real streams on every call; a process calls it once.
    for (const l of process.stdout.listeners('error')) if (!before.out.includes(l)) process.stdout.off('error', l as never);
    for (const l of process.stderr.listeners('error')) if (!before.err.includes(l)) process.stderr.off('error', l as never);
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { out, err, code };
}

describe('osm schedule', () => {
  it('add, list, disable, enable, trigger, rm with --json', async () => {
    const added = await osm('schedule', 'add', '-n', 'nightly', '-w', 'sample-recon', '-t', 'example.com', '-p', 'prefixes=www,api', '--cron', '0 2 * * *', '--json');
    expect(added.code, added.err).toBe(0);
    const row = JSON.parse(added.out);
    expect(row).toMatchObject({ name: 'nightly', workflow_name: 'sample-recon', trigger_type: 'cron', schedule: '0 2 * * *', is_enabled: true, input_config: { target: 'example.com', params: { prefixes: 'www,api' } } });
    expect(row.next_run).toEqual(expect.any(String));

    const list = JSON.parse((await osm('schedule', 'list', '--json')).out);
    expect(list.pagination.total).toBe(1);
    expect(list.data[0].id).toBe(row.id);

    const disabled = JSON.parse((await osm('schedule', 'disable', row.id, '--json')).out);
    expect(disabled).toEqual({ message: 'Schedule disabled', id: row.id, is_enabled: false, next_run: null });
    const enabled = JSON.parse((await osm('schedule', 'enable', row.id, '--json')).out);
    expect(enabled.is_enabled).toBe(true);

    const triggered = JSON.parse((await osm('schedule', 'trigger', row.id, '--json')).out);
    expect(triggered).toMatchObject({ message: 'Schedule triggered', schedule: 'nightly', workflow: 'sample-recon', status: 'queued' });
    const app = createAppContext({ baseFolder: dir });
    try {
      expect(app.store.runs.getByUuid(triggered.run_uuid)).toMatchObject({ trigger_type: 'manual', schedule_id: row.id, target: 'example.com' });
    } finally {
      app.close();
    }

    expect(JSON.parse((await osm('schedule', 'rm', row.id, '--json')).out)).toEqual({ message: 'Schedule deleted', id: row.id });
    expect(JSON.parse((await osm('schedule', 'list', '--json')).out).pagination.total).toBe(0);
  });

  it('prints a table without --json', async () => {
    await osm('schedule', 'add', '-n', 'ev', '-w', 'sample-recon', '--event', 'assets.*');
    const { out, code } = await osm('schedule', 'list', '--disable-color');
    expect(code).toBe(0);
    expect(out).toContain('event assets.*');
    expect(out).toContain('sample-recon');
  });

  it('reports errors as one line with a non-zero exit code', async () => {
    const bad = await osm('schedule', 'add', '-n', 'x', '-w', 'sample-recon', '--cron', '61 * * * *');
    expect(bad.code).toBe(1);
    expect(bad.err).toBe('Error: Invalid cron expression: minute: 61 is out of range 0-59\n');
    expect((await osm('schedule', 'add', '-n', 'x', '-w', 'sample-recon')).err).toMatch(/--cron .*--event .*--watch .*--manual/);
    expect((await osm('schedule', 'add', '-n', 'x', '-w', 'sample-recon', '--cron', '* * * * *', '--event', 'y')).err).toMatch(/only one of/);
    expect((await osm('schedule', 'add', '-n', 'x', '-w', 'nope', '--manual')).err).toBe('Error: Workflow not found\n');
    expect((await osm('schedule', 'add', '-n', 'x', '-w', 'sample-recon', '--manual', '-t', 'a.com;id')).err).toMatch(/forbidden character/);
    const missing = await osm('schedule', 'rm', 'sch_nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toBe('Error: Schedule not found\n');
  });
});
