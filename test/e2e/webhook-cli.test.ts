/**
 * `osm run … --as-webhook [--webhook-auth-key K]` and `osm webhook list|delete` with the built CLI,
 * then the real daemon (`serve` with server.enable_trigger_via_webhook) triggering a template
 * registered by the CLI and executing the run through its queue.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { configSet, dbPathOf, ensureBuilt, killAllDaemons, startDaemon, stopDaemon, until, type Daemon } from '../helpers/daemon.js';

let base: string;
let wf: string;
const cleanups: (() => void)[] = [];

function osm(args: string[]) {
  return runOsm(['-b', base, '-F', wf, ...args], { env: { OSM_SERVER: '', OSM_API_KEY: '' } });
}

function count(table: string): number {
  const db = new Database(dbPathOf(base), { readonly: true });
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

beforeAll(() => {
  ensureBuilt();
  const b = tempDir('osm-webhook-');
  const w = tempDir('osm-webhook-wf-');
  cleanups.push(b.cleanup, w.cleanup);
  base = b.dir;
  wf = w.dir;
  fs.mkdirSync(path.join(wf, 'modules'));
  fs.writeFileSync(path.join(wf, 'modules', 'hook-echo.yaml'), 'kind: module\nname: hook-echo\nsteps:\n  - name: say\n    type: bash\n    command: echo "hooked {{Target}} {{tag}}"\n');
});

afterAll(async () => {
  await killAllDaemons();
  for (const c of cleanups) c();
});

describe('osm run --as-webhook', () => {
  let uuids: string[] = [];

  it('registers one template per target and prints the trigger paths (JSON); runs nothing', async () => {
    const r = await osm(['run', '-m', 'hook-echo', '-t', 'a.example.com', '-t', 'b.example.com', '-p', 'tag=t1', '--as-webhook', '--webhook-auth-key', 'Secr3t-Key', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout);
    expect(rows).toHaveLength(2);
    for (const [i, target] of ['a.example.com', 'b.example.com'].entries()) {
      expect(Object.keys(rows[i]).sort()).toEqual(['kind', 'target', 'trigger_url', 'webhook_uuid', 'workflow']);
      expect(rows[i]).toMatchObject({ target, workflow: 'hook-echo', kind: 'module' });
      expect(rows[i].trigger_url).toBe(`/osm/api/webhook-runs/${rows[i].webhook_uuid}/trigger?key=Secr3t-Key`);
    }
    uuids = rows.map((x: { webhook_uuid: string }) => x.webhook_uuid);
    // The daemon's setting is off by default: the CLI says so.
    expect(r.stderr).toContain('server.enable_trigger_via_webhook is false');
    expect(count('runs')).toBe(0);
    expect(count('webhook_runs')).toBe(2);
  });

  it('text output: one trigger path per target, without ?key= when no key was given', async () => {
    const r = await osm(['run', '-m', 'hook-echo', '-t', 'c.example.com', '--as-webhook']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/✔ webhook [0-9a-f-]{36}: hook-echo \(module\) on c\.example\.com\n {2}trigger: POST \/osm\/api\/webhook-runs\/[0-9a-f-]{36}\/trigger\n/);
    expect(r.stdout).not.toContain('?key=');
    expect(r.stdout).not.toContain('stored as a hash');
    const keyed = await osm(['run', '-m', 'hook-echo', '-t', 'k.example.com', '--as-webhook', '--webhook-auth-key', 'Other-K3y']);
    expect(keyed.stdout).toContain('?key=Other-K3y\n  (the key is stored as a hash: this is the only time osm shows these trigger paths with it)');
    expect(count('webhook_runs')).toBeGreaterThan(0);
    const del = await osm(['webhook', 'delete', /webhook ([0-9a-f-]{36}):/.exec(keyed.stdout)![1]!]);
    expect(del.code, del.stderr).toBe(0);
  });

  it('validates like a run: hostile targets and params, unknown workflow, flag combinations', async () => {
    const before = count('webhook_runs');
    const fail = async (args: string[], message: RegExp) => {
      const r = await osm(['run', ...args]);
      expect(r.code, `${args.join(' ')}\n${r.stdout}`).toBe(2);
      expect(r.stderr).toMatch(message);
    };
    await fail(['-m', 'hook-echo', '-t', 'a.com;id', '--as-webhook'], /forbidden character ";"/);
    await fail(['-m', 'hook-echo', '-t', '-oProxyCommand=x', '--as-webhook'], /target/);
    await fail(['-m', 'hook-echo', '-t', 'a.com', '-p', 'tag=$(id)', '--as-webhook'], /forbidden character/);
    await fail(['-m', 'no-such-module', '-t', 'a.com', '--as-webhook'], /not found/i);
    await fail(['-m', 'hook-echo', '-t', 'a.com', '--webhook-auth-key', 'k'], /--webhook-auth-key needs --as-webhook/);
    await fail(['-m', 'hook-echo', '-t', 'a.com', '--as-webhook', '--queue'], /cannot be combined with --queue/);
    await fail(['-m', 'hook-echo', '-t', 'a.com', '--as-webhook', '--webhook-auth-key', ' '], /--webhook-auth-key must not be empty/);
    expect(count('webhook_runs')).toBe(before);
    expect(count('runs')).toBe(0);
  });

  it('osm webhook list redacts keys (stored as hashes: --show-secrets cannot show them); delete removes one', async () => {
    const list = await osm(['webhook', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const body = JSON.parse(list.stdout);
    expect(body.total).toBe(3);
    expect(list.stdout).not.toContain('Secr3t-Key');
    expect(body.data.filter((d: { webhook_auth_key: string }) => d.webhook_auth_key === '[REDACTED]')).toHaveLength(2);
    const shown = await osm(['webhook', 'list', '--json', '--show-secrets']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout + shown.stderr).not.toContain('Secr3t-Key');
    expect(shown.stderr).toContain('webhook auth keys are stored as hashes and cannot be shown');
    expect(JSON.parse(shown.stdout).data.filter((d: { webhook_auth_key: string }) => d.webhook_auth_key === '[REDACTED]')).toHaveLength(2);
    const table = await osm(['webhook', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('hook-echo');
    expect(table.stdout).not.toContain('Secr3t-Key');

    const del = await osm(['webhook', 'delete', uuids[1]!]);
    expect(del.code, del.stderr).toBe(0);
    expect(count('webhook_runs')).toBe(2);
    const missing = await osm(['webhook', 'delete', uuids[1]!]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Webhook not found');
  });

  it('the daemon triggers a CLI-registered template and executes the run', async () => {
    configSet(base, { 'server.enable_trigger_via_webhook': true });
    let d: Daemon | undefined;
    try {
      d = await startDaemon(base, { workflows: wf });
      const url = `${d.url}/osm/api/webhook-runs/${uuids[0]}/trigger`;
      expect((await fetch(url, { method: 'POST' })).status).toBe(401);
      const res = await fetch(`${url}?key=Secr3t-Key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target: 'override.example.com' }) });
      expect(res.status).toBe(202);
      const body = (await res.json()) as { run_uuid: string; target: string };
      expect(body.target).toBe('override.example.com');
      const run = await until(async () => {
        const r = await fetch(`${d!.url}/osm/api/runs/${body.run_uuid}?include_steps=true`, { headers: { 'x-osm-api-key': d!.apiKey } });
        const data = ((await r.json()) as { data: { status: string } }).data;
        return ['completed', 'failed', 'cancelled'].includes(data.status) ? data : undefined;
      }, 'triggered run to finish');
      expect(run).toMatchObject({ status: 'completed', trigger_type: 'webhook', priority: 'high', target: 'override.example.com' });
      expect((run as unknown as { steps: { output: string }[] }).steps[0]!.output).toBe('hooked override.example.com t1');
    } finally {
      await stopDaemon(d);
    }
  }, 90_000);
});
