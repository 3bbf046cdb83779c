import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let base: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-db-'));
});
afterAll(() => cleanup());

const osm = (args: string[]) => runOsm(['-b', base, ...args]);

describe('osm db', () => {
  it('migrate, index workflow, list tables and rows (read-only, validated)', async () => {
    expect((await osm(['db', 'migrate'])).stdout).toMatch(/is at schema version \d+/);
    expect((await osm(['db', 'index', 'workflow'])).stdout).toMatch(/Indexed .*: \d+ added/);
    const tables = JSON.parse((await osm(['db', 'list', '--json'])).stdout);
    expect(tables.workflows).toBeGreaterThan(0);
    expect(tables).toHaveProperty('runs', 0);
    const flows = JSON.parse((await osm(['db', 'list', '-t', 'workflows', '--where', "kind = 'flow'", '--columns', 'name,kind', '--json'])).stdout);
    expect(flows.length).toBeGreaterThan(0);
    expect(flows.every((f: { kind: string }) => f.kind === 'flow')).toBe(true);
    const write = await osm(['db', 'list', '-t', 'workflows', '--where', '1=1; DELETE FROM workflows']);
    expect(write.code).toBe(1);
    expect(JSON.parse((await osm(['db', 'list', '--json'])).stdout).workflows).toBe(tables.workflows);
    expect((await osm(['db', 'list', '-t', 'nope'])).stderr).toContain('unknown table "nope"');
  });

  it('clean needs --force, then recreates the schema (and --clean-ws empties the workspaces)', async () => {
    const refused = await osm(['db', 'clean']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('use --force to confirm');
    mkdirSync(join(base, 'workspaces', 'old.example.com'), { recursive: true });
    const r = await osm(['db', 'clean', '--force', '--clean-ws']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('recreated with fresh schema');
    expect(JSON.parse((await osm(['db', 'list', '--json'])).stdout).workflows).toBe(0);
    expect(existsSync(join(base, 'workspaces')) ? readdirSync(join(base, 'workspaces')) : []).toEqual([]);
  });
});
