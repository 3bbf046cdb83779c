/**
 * Webhook auth keys are stored as salted scrypt hashes, never in plain text: no column of the
 * table holds the key, the trigger still takes it in `?key=` (right key 202, wrong or missing
 * 401), and a database written before migration 010 keeps working after it — its plain keys are
 * hashed and gone from the database file.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlAll } from '../helpers/engine-sql.js';
import { setSettingValue } from '../../src/settings/set.js';
import { registerWebhookRuns, triggerWebhookRun } from '../../src/services/webhook-runs.js';
import { applyMigrations } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import { asyncSqlite, openStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const KEY = 'Plain-K3y-Never-Stored_0123';

let t: TestServer;
beforeAll(async () => {
  const wf = tempDir();
  fs.mkdirSync(path.join(wf.dir, 'modules'));
  fs.writeFileSync(path.join(wf.dir, 'modules', 'quick.yaml'), 'kind: module\nname: quick\ndescription: q\nsteps:\n  - name: hello\n    type: bash\n    command: echo hi\n');
  t = await makeTestServer({ workflowFolder: wf.dir });
  setSettingValue(t.app.manager.path, 'server.enable_trigger_via_webhook', 'true');
  t.app.manager.reload();
});
afterAll(async () => t.close());

/** Every value of every webhook_runs row, as text. */
function storedText(db: Database.Database): string {
  return JSON.stringify(db.prepare('SELECT * FROM webhook_runs').all());
}

describe('webhook auth keys at rest', () => {
  it('the table never holds the key, and the trigger still checks it', async () => {
    const [tpl] = await registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['keyed.example.com'], authKey: KEY });
    expect(JSON.stringify(await sqlAll(t, 'SELECT * FROM webhook_runs'))).not.toContain(KEY);
    expect(JSON.stringify(tpl)).not.toContain(KEY);
    const url = `/osm/api/webhook-runs/${tpl!.webhook_uuid}/trigger`;
    expect((await t.server.inject({ method: 'POST', url: `${url}?key=${encodeURIComponent(KEY)}` })).statusCode).toBe(202);
    expect((await t.server.inject({ method: 'GET', url: `${url}?key=${encodeURIComponent(KEY)}` })).statusCode).toBe(202);
    for (const bad of [`?key=${encodeURIComponent(`${KEY}x`)}`, '?key=', '', `?key=${encodeURIComponent(KEY.slice(0, -1))}`]) {
      const res = await t.server.inject({ method: 'POST', url: `${url}${bad}` });
      expect(res.statusCode, bad).toBe(401);
      expect(res.json()).toEqual({ error: true, message: 'Invalid or missing authentication key' });
    }
    // Two templates with the same key get different hashes (salted).
    const [again] = await registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['again.example.com'], authKey: KEY });
    const hashes = await sqlAll<{ h: string }>(t, 'SELECT webhook_auth_key_hash AS h FROM webhook_runs WHERE webhook_uuid IN (?, ?)', tpl!.webhook_uuid, again!.webhook_uuid);
    expect(new Set(hashes.map((r) => r.h)).size).toBe(2);
  });

  it('listings show [REDACTED] for a keyed template and an empty key for an open one', async () => {
    const [open] = await registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['open.example.com'] });
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/webhook-runs/list', headers: t.auth });
    expect(res.body).not.toContain(KEY);
    expect(res.body).not.toContain('scrypt$');
    const data = res.json().data as { webhook_uuid: string; webhook_auth_key: string }[];
    expect(data.find((d) => d.webhook_uuid === open!.webhook_uuid)?.webhook_auth_key).toBe('');
    expect(data.filter((d) => d.webhook_auth_key === '[REDACTED]').length).toBeGreaterThan(0);
  });
});

describe('migration 010 (plain keys written by an older osm)', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    while (cleanups.length) cleanups.pop()!();
  });

  it('hashes existing keys, removes them from the database file, and the templates keep working', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = path.join(dir, 'old.sqlite');
    const old = new Database(file);
    old.pragma('journal_mode = WAL');
    applyMigrations(old, migrations.filter((m) => m.version <= 9));
    const insert = old.prepare(`INSERT INTO webhook_runs (webhook_uuid, workflow_name, workflow_kind, target, webhook_auth_key, created_at, updated_at)
      VALUES (?, 'quick', 'module', ?, ?, '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')`);
    insert.run('11111111-1111-4111-8111-111111111111', 'keyed.example.com', KEY);
    insert.run('22222222-2222-4222-8222-222222222222', 'open.example.com', '');
    old.close();
    expect(fs.readFileSync(file).includes(KEY)).toBe(true); // the old format really had it

    const store = openStore(file);
    cleanups.push(() => store.close());
    expect(storedText(store.db)).not.toContain(KEY);
    const columns = (store.db.prepare('PRAGMA table_info(webhook_runs)').all() as { name: string }[]).map((c) => c.name);
    expect(columns).toContain('webhook_auth_key_hash');
    expect(columns).not.toContain('webhook_auth_key');
    for (const f of [file, `${file}-wal`]) if (fs.existsSync(f)) expect(fs.readFileSync(f).includes(KEY), f).toBe(false);

    // The migrated store behind an app: the key still opens the keyed template, the open one needs none.
    const app = { ...t.app, store, repos: asyncSqlite(store) } as typeof t.app;
    const keyed = store.webhookRuns.getByUuid('11111111-1111-4111-8111-111111111111')!;
    expect(keyed.webhook_auth_key_hash).toMatch(/^scrypt\$/);
    await expect(triggerWebhookRun(app, keyed.webhook_uuid, 'wrong', {})).rejects.toMatchObject({ status: 401 });
    const ok = await triggerWebhookRun(app, keyed.webhook_uuid, KEY, {});
    expect(ok.answer).toMatchObject({ message: 'Run triggered successfully', target: 'keyed.example.com' });
    const open = await triggerWebhookRun(app, '22222222-2222-4222-8222-222222222222', undefined, {});
    expect(open.answer.target).toBe('open.example.com');
  });
});
