/**
 * Real races between processes on one database file: every process is started and opened first,
 * then all are released at once. Correctness may not depend on who gets there first.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { fileStore, tempDir } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeModules = path.resolve(here, '../../../node_modules');

/** Bundles the worker to CommonJS so plain node runs it; better-sqlite3 stays external (native). */
function bundleWorker(dir: string): string {
  const out = path.join(dir, 'race-worker.cjs');
  buildSync({ entryPoints: [path.join(here, 'race-worker.ts')], bundle: true, platform: 'node', format: 'cjs', external: ['better-sqlite3'], outfile: out, logLevel: 'silent' });
  return out;
}

/** Starts one worker per argument list, releases them together, and collects their results. */
async function race(script: string, argLists: string[][]): Promise<unknown[]> {
  const children = argLists.map((args) => spawn(process.execPath, [script, ...args], { env: { ...process.env, NODE_PATH: nodeModules }, stdio: ['pipe', 'pipe', 'pipe'] }));
  const lines = children.map((child) => {
    const out: string[] = [];
    let buf = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        buf += String(d);
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          out.push(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (out.length === 1) resolve();
        }
      });
      child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`worker exited ${code}: ${stderr}`))));
    });
    const done = new Promise<unknown>((resolve, reject) =>
      child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out[1] ?? 'null')) : reject(new Error(`worker exited ${code}: ${stderr}`)))),
    );
    return { child, ready, done };
  });
  await Promise.all(lines.map((l) => l.ready));
  for (const l of lines) l.child.stdin.write('go\n');
  return Promise.all(lines.map((l) => l.done));
}

describe('store races between processes', () => {
  it('lets exactly one of many concurrent terminal transitions win', async () => {
    const dir = tempDir();
    const script = bundleWorker(dir);
    const { store, file } = fileStore(dir);
    const id = store.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 't', status: 'running' }).id;
    const targets = ['completed', 'failed', 'cancelled', 'completed', 'failed', 'cancelled'];
    const results = await race(script, targets.map((to) => [file, 'transition', `${id}:${to}`]));
    const winners = results.filter((r) => r !== null);
    expect(winners).toHaveLength(1);
    expect(store.runs.get(id)?.status).toBe(winners[0]);
  });

  it('never hands the same queued run to two claimers', async () => {
    const dir = tempDir();
    const script = bundleWorker(dir);
    const { store, file } = fileStore(dir);
    const ids = Array.from({ length: 30 }, (_, i) => store.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: `t${i}` }).id);
    const results = (await race(script, Array.from({ length: 4 }, () => [file, 'claim', '']))) as number[][];
    const claimed = results.flat();
    expect(claimed).toHaveLength(ids.length);
    expect(new Set(claimed).size).toBe(ids.length);
    expect([...claimed].sort((a, b) => a - b)).toEqual(ids);
    expect(store.runs.list({ status: 'queued' }, { offset: 0, limit: 1 }).total).toBe(0);
  });

  it('keeps imports and counters exact when processes import the same rows at once', async () => {
    const dir = tempDir();
    const script = bundleWorker(dir);
    const { store, file } = fileStore(dir);
    const results = (await race(script, Array.from({ length: 4 }, () => [file, 'import', '40']))) as { assetsNew: number; vulnsNew: number }[];
    expect(results.reduce((n, r) => n + r.assetsNew, 0)).toBe(40);
    expect(results.reduce((n, r) => n + r.vulnsNew, 0)).toBe(40);
    expect(store.workspaces.get('race.com')).toMatchObject({ total_assets: 40, total_vulns: 40, vuln_low: 40 });
    expect(store.stats.snapshot()).toMatchObject({ assets: { total: 40 }, vulnerabilities: { total: 40, low: 40 } });
  });
});
