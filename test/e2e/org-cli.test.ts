/** The built CLI end to end: `osm org …` and the global --org on `osm assets` / `osm vulns`, on a temporary base folder. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { createAppContext } from '../../src/services/context.js';
import { importAssetsJsonl, importVulnsJsonl } from '../../src/ingest/index.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../fixtures/data/', import.meta.url)), name);
let base: string;
let cleanup: () => void;
const counts = { example: 0, other: 0, vulns: 0 };

beforeAll(async () => {
  ({ dir: base, cleanup } = tempDir('osm-org-'));
  const app = createAppContext({ baseFolder: base });
  try {
    counts.example = (await importAssetsJsonl(app.store, 'example.com', fx('httpx-run1.jsonl'))).new;
    counts.other = (await importAssetsJsonl(app.store, 'other.org', fx('httpx-run2.jsonl'))).new;
    counts.vulns = (await importVulnsJsonl(app.store, 'example.com', fx('nuclei.jsonl'))).new;
  } finally {
    app.close();
  }
});
afterAll(() => cleanup());

const osm = (...args: string[]) => runOsm(['-b', base, ...args]);
const json = async (...args: string[]) => {
  const r = await osm(...args, '--json');
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
};

describe('osm org', () => {
  it('create, list, show, assign, rename, --org filters, delete', async () => {
    const created = await json('org', 'create', 'acme', '--description', 'Acme Corp', '--tags', 'client, prod');
    expect(created.data).toMatchObject({ name: 'acme', description: 'Acme Corp', tags: ['client', 'prod'], is_default: false });
    const dup = await osm('org', 'create', 'ACME');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('failed to create org "ACME": an org named "acme" already exists');

    const list = await json('org', 'list');
    expect(list.total).toBe(2);
    expect(list.data.map((o: { name: string }) => o.name)).toEqual(['default', 'acme']);
    expect(list.data[0].stats).toMatchObject({ total_workspaces: 2, total_assets: counts.example + counts.other, total_vulns: counts.vulns });

    const table = await osm('org', 'list');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/default \(default\)/);
    expect(table.stdout).toContain('acme');
    expect(table.stdout).toContain('2 org(s)');

    const assigned = await json('org', 'assign', 'acme', 'other.org', 'nowhere.net');
    expect(assigned.assigned).toEqual({ workspaces: 1, assets: counts.other, vulnerabilities: 0, runs: 0 });
    expect(assigned.unknown_workspaces).toEqual(['nowhere.net']);
    const assignText = await osm('org', 'assign', 'ACME', 'other.org');
    expect(assignText.stdout).toContain('Moved into org acme: 0 workspace(s), 0 asset(s)');

    // The global --org, before or after the command.
    const acmeAssets = await json('--org', 'acme', 'assets');
    expect(acmeAssets.total).toBe(counts.other);
    expect(acmeAssets.data.every((a: { workspace: string }) => a.workspace === 'other.org')).toBe(true);
    expect((await json('assets', '--org', created.data.uuid)).total).toBe(counts.other);
    expect((await json('assets', '--org', 'default')).total).toBe(counts.example);
    const stats = await json('assets', '--org', 'acme', '--stats');
    expect(stats.total).toBe(counts.other);
    const acmeVulns = await json('vulns', '--org', 'acme');
    expect(acmeVulns).toMatchObject({ data: [], total: 0, summary: { total: 0 } });
    const defaultVulns = await json('vulns', '--org', 'default');
    expect(defaultVulns.total).toBe(counts.vulns);
    expect(defaultVulns.summary.total).toBe(counts.vulns);
    for (const cmd of ['assets', 'vulns']) {
      const bad = await osm('--org', 'nope', cmd);
      expect(bad.code, cmd).toBe(1);
      expect(bad.stderr).toContain('org not found: nope');
    }

    const shown = await json('org', 'show', 'Acme');
    expect(shown.data).toMatchObject({ name: 'acme', stats: { total_workspaces: 1, total_assets: counts.other, workspaces: ['other.org'] } });
    const showText = await osm('org', 'show', 'acme');
    expect(showText.stdout).toContain('Workspaces: other.org');

    const renamed = await osm('org', 'rename', 'acme', 'acme-corp');
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toContain('Renamed org acme → acme-corp');
    const noDefault = await osm('org', 'rename', 'default', 'main');
    expect(noDefault.code).toBe(1);
    expect(noDefault.stderr).toContain('the default org cannot be deleted or renamed');
    expect((await osm('org', 'delete', 'default')).stderr).toContain('the default org cannot be deleted or renamed');
    expect((await osm('org', 'show', 'acme')).stderr).toContain('org not found: acme');

    const deleted = await json('org', 'delete', 'acme-corp');
    expect(deleted).toMatchObject({ message: 'org deleted', name: 'acme-corp', purged: false, rows: { workspaces: 1, assets: counts.other } });
    expect((await json('assets', '--org', 'default')).total).toBe(counts.example + counts.other);
  });

  it('delete --purge removes the org with its workspaces and their data', async () => {
    await json('org', 'create', 'temp');
    await json('org', 'assign', 'temp', 'example.com');
    const r = await osm('org', 'delete', 'temp', '--purge');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Deleted org temp and purged 1 workspace(s), ${counts.example} asset(s), ${counts.vulns} vulnerability(ies)`);
    expect((await json('assets', '-w', 'example.com')).total).toBe(0);
    expect((await json('vulns')).total).toBe(0);
    expect((await json('org', 'list')).data.map((o: { name: string }) => o.name)).toEqual(['default']);
  });

  it('org use makes an org the default of this base folder; --org wins; a deleted active org gets a clear error', async () => {
    const beta = await json('org', 'create', 'beta');
    expect((await json('org', 'use')).active_org).toBeNull();
    expect((await osm('org', 'use', 'beta')).stdout).toContain('Active org: beta');
    expect((await json('org', 'use')).active_org.uuid).toBe(beta.data.uuid);
    // beta has no workspaces yet: the default listing is now beta's (empty); --org default still sees the rest.
    expect((await json('assets')).total).toBe(0);
    expect((await json('--org', 'default', 'assets')).total).toBeGreaterThan(0);
    expect((await osm('org', 'use', 'beta', '--clear')).code).toBe(1);
    expect((await osm('org', 'delete', 'beta')).code).toBe(0);
    const stale = await osm('assets');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("the active org chosen with 'osm org use' no longer exists");
    expect((await osm('org', 'use', '--clear')).stdout).toContain('No active org');
    expect((await json('assets')).total).toBeGreaterThan(0);
  });
});
