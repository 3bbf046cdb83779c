import { describe, expect, it } from 'vitest';
import { parseWorkflowText } from '../../../src/workflow/parse.js';
import { validateSettingsObject } from '../../../src/settings/load.js';
import { scopeSetFor } from '../../../src/scope/index.js';

describe('scope in workflows and settings', () => {
  it('a workflow scope: key is parsed into include/exclude; a list with "!" entries works too', () => {
    const a = parseWorkflowText('kind: module\nname: a\nscope:\n  include: ["*.example.com"]\n  exclude: [admin.example.com]\nsteps: []\n', 'a.yaml');
    expect(a.issues.filter((i) => i.severity === 'error')).toEqual([]);
    expect(a.workflow!.scope).toEqual({ include: ['*.example.com'], exclude: ['admin.example.com'] });
    const b = parseWorkflowText('kind: module\nname: b\nscope:\n  - .example.com\n  - "!www.example.com"\nsteps: []\n', 'b.yaml');
    expect(b.workflow!.scope).toEqual({ include: ['.example.com'], exclude: ['www.example.com'] });
  });

  it('bad workflow scope entries are errors, every one of them', () => {
    const r = parseWorkflowText('kind: module\nname: c\nscope:\n  include: ["a*.com", "ok.com", "10.0.0.0/33"]\nsteps: []\n', 'c.yaml');
    const msgs = r.issues.filter((i) => i.severity === 'error').map((i) => `${i.path}: ${i.message}`);
    expect(msgs.some((m) => /scope\.include\[0\].*wildcards/.test(m)), msgs.join('\n')).toBe(true);
    expect(msgs.some((m) => /scope\.include\[2\].*invalid CIDR/.test(m)), msgs.join('\n')).toBe(true);
  });

  it('settings: a scope section with workspace and org scopes validates, bad entries do not', () => {
    const s = validateSettingsObject({ scope: { include: ['.example.com'], workspaces: { dev: { include: ['*.dev.example.com'] } }, orgs: { acme: ['x.acme.test', '!y.acme.test'] } } });
    expect(s.scope.orgs.acme).toEqual({ include: ['x.acme.test'], exclude: ['y.acme.test'] });
    const set = scopeSetFor({ settings: s, workspace: 'dev', org: { uuid: 'u1', name: 'acme' } });
    expect(set.layers.map((l) => l.name)).toEqual(['settings', 'workspace:dev', 'org:acme']);
    expect(() => validateSettingsObject({ scope: { include: ['bad*.com'] } })).toThrow(/wildcards/);
    expect(() => validateSettingsObject({ scope: { workspaces: { dev: { include: ['re:('] } } } })).toThrow(/invalid regex/);
    expect(validateSettingsObject({}).scope).toEqual({ include: [], exclude: [], workspaces: {}, orgs: {} });
  });
});

describe('migration 015 (run_scope)', () => {
  it('is applied to a database already at a later version that never recorded it', async () => {
    const { default: Database } = await import('better-sqlite3');
    const { applyMigrations, migrations } = await import('../../../src/store/index.js');
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    applyMigrations(db, migrations.filter((m) => m.version !== 15));
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'run_scope'").get()).toBeUndefined();
    expect(applyMigrations(db, migrations)).toEqual([15]);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'run_scope'").get()).toBeDefined();
    expect(applyMigrations(db, migrations)).toEqual([]);
    db.close();
  });
});
