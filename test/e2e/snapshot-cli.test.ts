/** The built CLI end to end: assets, vulns and snapshot export → delete → import on a temporary base folder. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAppContext } from '../../src/services/context.js';
import { importAssetsJsonl, importVulnsJsonl } from '../../src/ingest/index.js';
import { buildZip } from '../unit/snapshot/zip-builder.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = path.join(root, 'bin', 'osm.js');
const fx = (name: string) => path.join(root, 'test', 'fixtures', 'data', name);
let tmp: string;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when the sources are newer than the build (or it is missing). */
function ensureBuilt(): void {
  const built = path.join(root, 'dist', 'cli', 'actions', 'snapshot.js');
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= newestMtime(path.join(root, 'src'))) return;
  // tsc emits even when files owned by others have type errors; the checks below catch a missing build.
  spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'ignore' });
  if (!fs.existsSync(built)) throw new Error('build failed: dist/cli/actions/snapshot.js missing');
}

function osm(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.OSM_BASE_FOLDER;
  const r = spawnSync(process.execPath, [bin, '-b', tmp, ...args], { encoding: 'utf8', env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const rel = path.relative(dir, path.join(e.parentPath, e.name));
    out[rel] = e.isDirectory() ? 'dir' : fs.readFileSync(path.join(dir, rel), 'utf8');
  }
  return out;
}

const WS = 'example.com';
let workspaceDir: string;

beforeAll(async () => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  const app = createAppContext({ baseFolder: tmp });
  try {
    workspaceDir = path.join(app.settings().paths.workspaces, WS);
    fs.mkdirSync(path.join(workspaceDir, 'probing'), { recursive: true });
    fs.copyFileSync(fx('httpx-run1.jsonl'), path.join(workspaceDir, 'probing', 'httpx.jsonl'));
    fs.writeFileSync(path.join(workspaceDir, 'run-state.json'), '{"run":{"status":"completed"}}\n');
    await importAssetsJsonl(app.store, WS, fx('httpx-run1.jsonl'));
    await importVulnsJsonl(app.store, WS, fx('nuclei.jsonl'));
  } finally {
    app.close();
  }
}, 300_000);
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('osm assets and osm vulns (built CLI)', () => {
  it('lists assets as a table and as JSON with filters', () => {
    const t = osm('assets', '-w', WS);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('www.example.com');
    expect(t.stdout).toContain('Showing 5 of 5 assets');
    const j = JSON.parse(osm('assets', '-w', WS, '--status', '403', '--json').stdout);
    expect(j.total).toBe(1);
    expect(j.data[0]).toMatchObject({ asset_value: 'cdn.example.com', is_cdn: true });
    expect(j.data[0]).not.toHaveProperty('raw_json_data');
    const stats = JSON.parse(osm('assets', '-w', WS, '--stats', '--json').stdout);
    expect(stats.total).toBe(5);
    expect(Object.values(stats.by_type as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(5);
    expect(stats.by_status['403']).toBe(1);
    expect(osm('assets', '-w', WS, '--stats').stdout).toContain('Total: 5 assets in');
    const bad = osm('assets', '--limit', 'lots');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--limit must be a positive integer');
  });

  it('lists vulnerabilities with a summary line, filtered by severity', () => {
    const t = osm('vulns', '-w', WS, '--severity', 'critical,high');
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('CVE-2021-41773');
    expect(t.stdout).not.toContain('tech-detect');
    expect(t.stdout).toContain('example.com: critical 1 · high 1 · medium 1 · low 1 · info 2 — total 6');
    const j = JSON.parse(osm('vulns', '--json').stdout);
    expect(j.summary).toMatchObject({ total: 6, by_severity: { info: 2 } });
    const bad = osm('vulns', '--severity', 'urgent');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Invalid severity: urgent');
  });
});

describe('osm snapshot (built CLI)', () => {
  it('export → delete → import restores the files and the rows', () => {
    const filesBefore = tree(workspaceDir);
    const assetsBefore = JSON.parse(osm('assets', '-w', WS, '--json').stdout).data.map(({ id: _i, ...rest }: { id: number }) => rest);
    const zip = path.join(tmp, 'out', 'example.zip');
    const ex = osm('snapshot', 'export', WS, '-o', zip);
    expect(ex.code, ex.stderr).toBe(0);
    expect(ex.stdout).toMatch(/Exported example\.com → .*example\.zip \(.*, 2 files, \d+ database rows\)/);

    const app = createAppContext({ baseFolder: tmp });
    try {
      app.store.workspaces.delete(WS);
    } finally {
      app.close();
    }
    fs.rmSync(workspaceDir, { recursive: true });
    expect(JSON.parse(osm('assets', '--json').stdout).total).toBe(0);

    const im = osm('snapshot', 'import', zip);
    expect(im.code, im.stderr).toBe(0);
    expect(im.stdout).toContain(`Imported workspace ${WS} → ${workspaceDir} (2 files`);
    expect(im.stdout).toContain('Only import from trusted sources.');
    expect(tree(workspaceDir)).toEqual(filesBefore);
    const assetsAfter = JSON.parse(osm('assets', '-w', WS, '--json').stdout).data.map(({ id: _i, ...rest }: { id: number }) => rest);
    expect(assetsAfter).toEqual(assetsBefore);
    expect(osm('vulns', '-w', WS).stdout).toContain('total 6');

    const again = osm('snapshot', 'import', zip);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`Error: Failed to import snapshot: workspace already exists: ${WS} (use --force to overwrite)`);
    const forced = osm('snapshot', 'import', zip, '--force', '--json');
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ workspace: WS, data_source: 'imported', files_count: 2 });
  });

  it('stores default exports in the snapshot folder and lists them', () => {
    expect(osm('snapshot', 'export', WS, '--no-artifacts').code).toBe(0);
    const list = osm('snapshot', 'list');
    expect(list.stdout).toMatch(/example\.com_\d{10}\.zip/);
    const j = JSON.parse(osm('snapshot', 'list', '--json').stdout);
    expect(j.count).toBe(1);
    expect(j.data[0].size).toBeGreaterThan(0);
  });

  it('refuses a hostile zip and writes nothing', () => {
    const evil = path.join(tmp, 'evil.zip');
    fs.writeFileSync(evil, buildZip([{ name: 'evil.io/../../pwned.txt', data: Buffer.from('x') }]));
    const before = fs.readdirSync(path.dirname(workspaceDir)).sort();
    const r = osm('snapshot', 'import', evil);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: Failed to import snapshot: illegal file path: "evil.io/../../pwned.txt" (parent directory segment)');
    expect(fs.readdirSync(path.dirname(workspaceDir)).sort()).toEqual(before);
    expect(fs.existsSync(path.join(tmp, 'pwned.txt'))).toBe(false);
  });

  it('reports a missing workspace or file clearly', () => {
    expect(osm('snapshot', 'export', 'nope.io').stderr).toContain('Error: Workspace not found: nope.io');
    expect(osm('snapshot', 'import', path.join(tmp, 'missing.zip')).stderr).toContain('Error: Import file not found:');
  });
});
