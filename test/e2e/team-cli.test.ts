/**
 * `osm user`, `osm token` and `osm audit` with the built CLI: on the base folder's database while
 * a daemon runs (the daemon sees the changes at its next request), and through the daemon with
 * `--server` carrying a personal token (same 401/403 as any client).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../helpers/cli.js';
import { ensureBuilt, killAllDaemons, startDaemon, type Daemon } from '../helpers/daemon.js';

let base: string;
let daemon: Daemon;

beforeAll(async () => {
  ensureBuilt();
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-team-'));
  daemon = await startDaemon(base);
}, 60_000);
afterAll(async () => {
  await killAllDaemons();
  fs.rmSync(base, { recursive: true, force: true });
});

const osm = (args: string[], input?: string, env: Record<string, string> = {}) => runOsm(['-b', base, ...args], { input, env });

describe('osm user and osm token on the local database, with the daemon running', () => {
  it('adds users from stdin, lists them as JSON, changes roles and passwords, removes them', async () => {
    const add = await osm(['user', 'add', 'alice', '--role', 'viewer', '--password-stdin', '--json'], 'alice-long-password\n');
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout).data).toMatchObject({ username: 'alice', role: 'viewer', orgs: [] });
    // The running daemon sees the new user at once: it can log in.
    const login = await fetch(`${daemon.url}/osm/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: 'alice-long-password' }) });
    expect(login.status).toBe(200);
    const ls = await osm(['user', 'ls', '--json']);
    expect(JSON.parse(ls.stdout).data.map((u: { username: string }) => u.username)).toEqual(['alice']);
    expect((await osm(['user', 'role', 'alice', 'operator'])).stdout).toMatch(/alice: role operator/);
    const pw = await osm(['user', 'passwd', 'alice', '--password-stdin'], 'a-brand-new-password\n');
    expect(pw.code, pw.stderr).toBe(0);
    const again = await fetch(`${daemon.url}/osm/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: 'alice-long-password' }) });
    expect(again.status).toBe(401);
    const weak = await osm(['user', 'add', 'bob', '--role', 'admin', '--password-stdin'], 'short\n');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/Password refused: a password needs at least 10 characters/);
    const noTty = await osm(['user', 'add', 'bob', '--role', 'admin']);
    expect(noTty.code).not.toBe(0);
    expect(noTty.stderr).toMatch(/--password-stdin/);
    expect((await osm(['user', 'rm', 'alice'])).code).toBe(0);
    expect((await osm(['user', 'rm', 'alice'])).stderr).toMatch(/User not found: alice/);
  });

  it('creates a token shown once, uses it against the daemon, gets 403 beyond its role, revokes it', async () => {
    const created = await osm(['token', 'create', '--name', 'ci', '--role', 'viewer', '--expires', '30d', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { token, data } = JSON.parse(created.stdout);
    expect(token).toMatch(/^osm_/);
    expect(data).toMatchObject({ name: 'ci', role: 'viewer', status: 'active' });
    const ls = await osm(['token', 'ls']);
    expect(ls.stdout).toContain('ci');
    expect(ls.stdout).not.toContain(token);
    // Through the daemon with the token: reading works, running is forbidden (same message as the API).
    const runs = await osm(['run', '-m', 'sample-recon', '-t', 'example.com', '--server', daemon.url, '--api-key', token]);
    expect(runs.code).not.toBe(0);
    expect(`${runs.stdout}${runs.stderr}`).toMatch(/403: Forbidden: this requires the operator role \(your credential has the viewer role\)/);
    const users = await osm(['user', 'ls', '--server', daemon.url, '--api-key', token]);
    expect(users.code).not.toBe(0);
    expect(users.stderr).toMatch(/403: Forbidden: this requires the admin role/);
    const asAdmin = await osm(['user', 'ls', '--json', '--server', daemon.url, '--api-key', daemon.apiKey]);
    expect(asAdmin.code, asAdmin.stderr).toBe(0);
    expect((await osm(['token', 'revoke', 'ci'])).stdout).toMatch(/Token revoked: ci/);
    const after = await fetch(`${daemon.url}/osm/api/runs`, { headers: { 'x-osm-api-key': token } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { message: string }).message).toBe("API token 'ci' has been revoked");
  });

  it('osm audit lists and exports what happened, locally and through the daemon', async () => {
    const table = await osm(['audit', '--limit', '100']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/token create/);
    const jsonl = await osm(['audit', '--jsonl']);
    const rows = jsonl.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.some((r: { route: string; status: number }) => r.route === '/osm/api/runs' && r.status === 403)).toBe(true);
    expect(rows.some((r: { route: string }) => r.route === 'user add')).toBe(true);
    expect(jsonl.stdout).not.toContain('alice-long-password');
    const remote = await osm(['audit', '--json', '--server', daemon.url, '--api-key', daemon.apiKey]);
    expect(remote.code, remote.stderr).toBe(0);
    expect(JSON.parse(remote.stdout).pagination.total).toBeGreaterThan(0);
  });
});
