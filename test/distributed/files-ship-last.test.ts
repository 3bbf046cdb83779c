/**
 * The worker's file shipper at a run's end: the last chunks of the log folder and of the artifacts
 * leave with the attempt's end record (the `last` send given to finish), in one fenced round trip,
 * rather than as a file round of their own followed by the end. A refused `last` is a fenced-off
 * attempt; a `last` that fails (Redis away) is thrown to the caller, never taken as sent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppContext, type SqliteAppContext } from '../../src/services/context.js';
import { FileShipper, type FileChunk } from '../../src/distributed/files-ship.js';
import { PROTOCOL_VERSION, type TaskResult } from '../../src/distributed/protocol.js';

const dirs: string[] = [];
const apps: SqliteAppContext[] = [];

afterEach(() => {
  for (const a of apps.splice(0)) a.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A scratch run on a worker with a journal, a step log and a report in its workspace folder. */
function scratchRun() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-ship-last-'));
  dirs.push(base);
  const app = createAppContext({ baseFolder: base });
  apps.push(app);
  const run = app.store.runs.create({ workflow_name: 'writer', workflow_kind: 'module', target: 'last.example.com', workspace: 'last.example.com', status: 'running' });
  const root = path.join(app.settings().paths.workspaces, 'last.example.com');
  fs.mkdirSync(path.join(root, 'logs', run.run_uuid), { recursive: true });
  fs.writeFileSync(path.join(root, 'logs', run.run_uuid, 'output.journal'), '{"event":"step"}\n');
  fs.writeFileSync(path.join(root, 'logs', run.run_uuid, 'produce.log'), 'a line\n');
  fs.writeFileSync(path.join(root, 'report.txt'), 'ARTIFACT\n');
  const result: TaskResult = {
    v: PROTOCOL_VERSION, worker_id: 'w1', hostname: 'h',
    run: { status: 'completed', started_at: null, completed_at: null, error_message: '', total_steps: 1, completed_steps: 1, workspace: 'last.example.com' },
    steps: [], events: [],
    artifacts: [{ name: 'found', artifact_path: path.join(root, 'report.txt'), workspace: 'last.example.com', artifact_type: 'report', content_type: 'txt', size_bytes: 9, line_count: 1, optional: false, description: '' }],
    truncated: false,
  };
  return { app, run, result };
}

describe('FileShipper.finish with the end record', () => {
  it('sends the final chunks through `last` (one call), not as a round of their own', async () => {
    const { app, run, result } = scratchRun();
    const rounds: FileChunk[][] = [];
    const lasts: FileChunk[][] = [];
    const shipper = new FileShipper(app, run.run_uuid, async (cs) => (rounds.push(cs), true));
    expect(await shipper.finish(result, 'w1', async (cs) => (lasts.push(cs), true))).toBe(true);
    expect(rounds).toEqual([]);
    expect(lasts).toHaveLength(1);
    // Step logs first, the journal after them, then the artifact; each whole file ends with eof.
    expect(lasts[0]!.map((c) => [c.path, c.offset, c.eof, Buffer.from(c.data, 'base64').toString()])).toEqual([
      [`logs/${run.run_uuid}/produce.log`, 0, true, 'a line\n'],
      [`logs/${run.run_uuid}/output.journal`, 0, true, '{"event":"step"}\n'],
      ['report.txt', 0, true, 'ARTIFACT\n'],
    ]);
    // The artifact names its workspace-relative path: the master makes it its own.
    expect(result.artifacts[0]!.artifact_path).toBe('report.txt');
    expect(shipper.shippedBytes).toBe(7 + 17 + 9);
  });

  it('without `last`, the final chunks go as a round (the end record is the caller\'s own call)', async () => {
    const { app, run, result } = scratchRun();
    const rounds: FileChunk[][] = [];
    const shipper = new FileShipper(app, run.run_uuid, async (cs) => (rounds.push(cs), true));
    expect(await shipper.finish(result, 'w1')).toBe(true);
    expect(rounds.map((r) => r.map((c) => c.path))).toEqual([[`logs/${run.run_uuid}/produce.log`, `logs/${run.run_uuid}/output.journal`, 'report.txt']]);
  });

  it('a refused `last` is a fenced-off attempt; a failing one is thrown', async () => {
    const refused = scratchRun();
    expect(await new FileShipper(refused.app, refused.run.run_uuid, async () => true).finish(refused.result, 'w1', async () => false)).toBe(false);

    const failing = scratchRun();
    await expect(
      new FileShipper(failing.app, failing.run.run_uuid, async () => true).finish(failing.result, 'w1', async () => {
        throw new Error('Connection is closed.');
      }),
    ).rejects.toThrow('Connection is closed.');
  });
});
