/** Target scope end to end (docs/scope.md): refused targets, foreach items and imports dropped and counted, `osm scope check`. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { finalJson, runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const FIX = join(ROOT, 'test/fixtures/scope');
let base: string;
let cleanup: () => void;
let scopeFile: string;
const osm = (args: string[]) => runOsm(['-b', base, '-F', FIX, ...args]);

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-scope-'));
  scopeFile = join(base, 'scope.txt');
  writeFileSync(scopeFile, '# engagement scope\n.example.com\n10.0.0.0/8\n!admin.example.com\n');
});
afterAll(() => cleanup());

describe('osm run with a scope', () => {
  it('refuses an out-of-scope target before anything runs (exit 2, no run row, no workspace)', async () => {
    const r = await osm(['run', '-m', 'scope-foreach', '-t', 'admin.example.com', '--scope-file', scopeFile, '-S', 'refused-ws']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('1 target(s) out of scope, nothing was run: admin.example.com: out of scope: excluded by "admin.example.com" in the run scope');
    expect(existsSync(join(base, 'workspaces', 'refused-ws'))).toBe(false);
    const db = new Database(join(base, 'database-osm.sqlite'), { readonly: true });
    try {
      expect((db.prepare("SELECT COUNT(*) AS n FROM runs WHERE target = 'admin.example.com'").get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
  });

  it('a dry run checks the scope too', async () => {
    const r = await osm(['run', '-m', 'scope-foreach', '-t', 'evil.org', '--scope-file', scopeFile, '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('evil.org: out of scope: matched by no include entry in the run scope');
  });

  it('an invalid scope file is a usage error listing every bad line (exit 2)', async () => {
    const bad = join(base, 'bad-scope.txt');
    writeFileSync(bad, 'ok.example.com\nfoo*.example.com\n!300.1.1.1\n');
    const r = await osm(['run', '-m', 'scope-foreach', '-t', 'ok.example.com', '--scope-file', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line 2: wildcards are only allowed/);
    expect(r.stderr).toMatch(/line 3: invalid IP address/);
  });

  it('foreach items and imported rows out of scope are dropped and counted; only in-scope items reach the command', async () => {
    const r = await osm(['run', '-m', 'scope-foreach', '-t', 'www.example.com', '--scope-file', scopeFile, '-S', 'mixed', '--json']);
    expect(r.code, r.stderr + r.stdout.slice(-2000)).toBe(0);
    const seen = readFileSync(join(base, 'workspaces', 'mixed', 'seen.txt'), 'utf8').trim().split('\n').sort();
    // plainword is not a network value: it passes (docs/scope.md); evil.org and admin.example.com never ran.
    expect(seen).toEqual(['GOT 10.0.0.5', 'GOT a.example.com', 'GOT https://b.example.com/x', 'GOT plainword']);
    const run = finalJson(r.stdout);
    expect(run.scope).toMatchObject({ dropped: 4, by_source: { foreach: 2, 'import:subfinder': 2 } });
    expect(run.scope.samples.map((s: { value: string }) => s.value).sort()).toEqual(['admin.example.com', 'admin.example.com', 'evil.org', 'evil.org']);
    expect(run.scope.layers).toEqual([{ name: 'run', include: ['.example.com', '10.0.0.0/8'], exclude: ['admin.example.com'] }]);
    const assets = JSON.parse((await osm(['assets', '-w', 'mixed', '--json'])).stdout);
    expect(assets.data.map((a: { asset_value: string }) => a.asset_value)).toEqual(['www.example.com']);
    // The terminal summary shows the counts too.
    const text = await osm(['run', '-m', 'scope-foreach', '-t', 'www.example.com', '--scope-file', scopeFile, '-S', 'mixed2']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Scope: 4 out-of-scope item(s) dropped (foreach: 2, import:subfinder: 2)');
    expect(text.stdout).toMatch(/scope: 2 out-of-scope item\(s\) of loop dropped/);
  });

  it("a workflow's scope: key is enforced, and an invalid one fails validation", async () => {
    const out = await osm(['run', '-m', 'scope-in-workflow', '-t', 'admin.example.com']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('in the workflow:scope-in-workflow scope');
    const ok = await osm(['run', '-m', 'scope-in-workflow', '-t', 'www.example.com', '-S', 'wf-ok']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(join(base, 'workspaces', 'wf-ok', 'ran.txt'))).toBe(true);
    const bad = await osm(['workflow', 'validate', 'scope-bad']);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toMatch(/wildcards are only allowed/);
    expect(bad.stdout + bad.stderr).toMatch(/invalid CIDR/);
  });
});

describe('a module\'s scope: key inside a flow', () => {
  it('narrows the run for that module only, and skips the module when the target is outside it', async () => {
    const r = await osm(['run', '-f', 'scope-flow', '-t', 'admin.example.com', '-S', 'flow-admin', '--json']);
    expect(r.code, r.stderr + r.stdout.slice(-2000)).toBe(0);
    const ws = join(base, 'workspaces', 'flow-admin');
    expect(existsSync(join(ws, 'ran.txt'))).toBe(false);
    // The loop module's own scope drops a.example.com (excluded) and evil.org (not included); admin.example.com is inside it.
    expect(readFileSync(join(ws, 'mod-seen.txt'), 'utf8').trim().split('\n')).toEqual(['MOD b.example.com', 'MOD 10.0.0.5', 'MOD plainword']);
    const run = finalJson(r.stdout);
    expect(run.scope).toMatchObject({ dropped: 2, by_source: { foreach: 2 } });
    expect(run.scope.layers).toEqual([{ name: 'module:scope-module-loop', include: ['*.example.com', '10.0.0.0/8'], exclude: ['a.example.com'] }]);
    const text = await osm(['run', '-f', 'scope-flow', '-t', 'admin.example.com', '-S', 'flow-admin2']);
    expect(text.code).toBe(0);
    expect(text.stdout + text.stderr).toContain('Module scope-in-workflow skipped: target admin.example.com is out of scope: excluded by "admin.example.com" in the module:scope-in-workflow scope');
  });

  it('adds to the run scope: both must admit an item', async () => {
    const narrow = join(base, 'narrow-scope.txt');
    writeFileSync(narrow, '.example.com\n!b.example.com\n');
    const r = await osm(['run', '-f', 'scope-flow', '-t', 'www.example.com', '-S', 'flow-www', '--scope-file', narrow, '--json']);
    expect(r.code, r.stderr + r.stdout.slice(-2000)).toBe(0);
    const ws = join(base, 'workspaces', 'flow-www');
    expect(existsSync(join(ws, 'ran.txt'))).toBe(true);
    expect(readFileSync(join(ws, 'mod-seen.txt'), 'utf8').trim().split('\n')).toEqual(['MOD plainword']);
    const run = finalJson(r.stdout);
    expect(run.scope.layers.map((l: { name: string }) => l.name)).toEqual(['run', 'module:scope-in-workflow', 'module:scope-module-loop']);
    expect(run.scope).toMatchObject({ dropped: 4 });
  });
});

describe('osm import with a scope', () => {
  it('drops and counts rows out of scope', async () => {
    const f = join(base, 'imp-scope.txt');
    writeFileSync(f, '*.example.com\n!mail.example.com\n');
    const r = await osm(['import', 'subfinder', join(ROOT, 'test/fixtures/tools/subfinder.jsonl'), '-w', 'imp', '--scope-file', f, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const stats = JSON.parse(r.stdout);
    expect(stats).toMatchObject({ new: 2, out_of_scope: 1, scope: { dropped: 1, by_source: { 'import:subfinder': 1 } } });
    const text = await osm(['import', 'subfinder', join(ROOT, 'test/fixtures/tools/subfinder.jsonl'), '-w', 'imp2', '--scope-file', f]);
    expect(text.stdout).toContain('out of scope: 1 row(s) dropped (e.g. mail.example.com)');
  });
});

describe('osm scope check', () => {
  it('explains the decision: rule, list, layer; exit 0 in scope, 1 out', async () => {
    const inR = await osm(['scope', 'check', 'https://API.example.com:8443/x', '--scope-file', scopeFile]);
    expect(inR.code).toBe(0);
    expect(inR.stdout).toContain('IN SCOPE');
    expect(inR.stdout).toContain('read as: host api.example.com port 8443');
    expect(inR.stdout).toContain('run: included — include ".example.com" (line 2)');
    const out = await osm(['scope', 'check', 'admin.example.com', '--scope-file', scopeFile, '--json']);
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ in_scope: false, layer: 'run', rule: { text: 'admin.example.com', line: 4, list: 'exclude' } });
    const none = await osm(['scope', 'check', 'anything.org']);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('no scope is configured');
    const wf = await osm(['scope', 'check', 'admin.example.com', '-m', 'scope-in-workflow']);
    expect(wf.code).toBe(1);
    expect(wf.stdout).toContain('workflow:scope-in-workflow: excluded');
    // usage errors are 2, never the "out of scope" 1 a script would act on
    const missing = await osm(['scope', 'check']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'value'");
    expect((await osm(['scope', 'check', 'a.example.com', '--no-such-option'])).code).toBe(2);
  });
});

describe('scopes from the settings', () => {
  it('settings, workspace and run layers intersect; each can only narrow', async () => {
    const { dir, cleanup: done } = tempDir('osm-scope-settings-');
    try {
      const o = (args: string[]) => runOsm(['-b', dir, '-F', FIX, ...args]);
      expect((await o(['scope', 'check', 'x.example.com'])).code).toBe(0); // creates the settings file
      const file = join(dir, 'osm-settings.yaml');
      const text = readFileSync(file, 'utf8');
      const scoped = text.replace(/^scope:\n(?:[ #].*\n|\n)*/m, 'scope:\n  include: [".example.com", "10.0.0.0/8"]\n  exclude: ["admin.example.com"]\n  workspaces:\n    dev: { include: ["*.dev.example.com"] }\n');
      expect(scoped).not.toBe(text);
      writeFileSync(file, scoped);
      const a = await o(['scope', 'check', 'www.example.com', '--json']);
      expect(JSON.parse(a.stdout)).toMatchObject({ in_scope: true, layers: [{ layer: 'settings', reason: 'included' }] });
      const b = await o(['scope', 'check', 'www.example.com', '-w', 'dev', '--json']);
      expect(b.code).toBe(1);
      expect(JSON.parse(b.stdout)).toMatchObject({ in_scope: false, layer: 'workspace:dev' });
      const c = await o(['scope', 'check', 'api.dev.example.com', '-w', 'dev', '--json']);
      expect(JSON.parse(c.stdout).in_scope).toBe(true);
      // A run layer cannot widen the settings: evil.org stays out even if the file includes it.
      const wide = join(dir, 'wide.txt');
      writeFileSync(wide, '*\n');
      const r = await o(['run', '-m', 'scope-in-workflow', '-t', 'evil.org', '--scope-file', wide]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('in the settings scope');
    } finally {
      done();
    }
  });
});
