/** GET /workflows/{name}/lint: the linter's findings with the lines the dashboard shows them at. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

let t: TestServer;
let wf: { dir: string; cleanup: () => void };

beforeAll(async () => {
  wf = tempDir('osm-lint-');
  fs.mkdirSync(path.join(wf.dir, 'modules'), { recursive: true });
  fs.writeFileSync(
    path.join(wf.dir, 'modules', 'linty.yaml'),
    ['kind: module', 'name: linty', 'description: has a slip', 'stepz: []', 'steps:', '  - name: a', '    type: bash', '    command: echo {{no_such_var}}', ''].join('\n'),
  );
  fs.writeFileSync(path.join(wf.dir, 'modules', 'clean.yaml'), ['kind: module', 'name: clean', 'steps:', '  - name: a', '    type: bash', '    command: echo ok', ''].join('\n'));
  t = await makeTestServer({ workflowFolder: wf.dir });
});
afterAll(async () => {
  await t.close();
  wf.cleanup();
});

describe('GET /osm/api/workflows/:name/lint', () => {
  it('lists each finding with its line in the file', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/workflows/linty/lint', headers: t.auth });
    expect(res.statusCode).toBe(200);
    const r = res.json().data;
    expect(r).toMatchObject({ name: 'linty', kind: 'module' });
    const unknown = r.issues.find((i: { rule?: string }) => i.rule === 'unknown-key');
    expect(unknown).toMatchObject({ severity: 'warning', line: 4 });
    expect(unknown.message).toContain("'stepz'");
    const variable = r.issues.find((i: { rule?: string }) => i.rule === 'undefined-variable');
    expect(variable).toMatchObject({ line: 8 });
    expect(r.warnings + r.errors).toBe(r.issues.length);
    // The file's place on the server is not part of the answer.
    expect(res.body).not.toContain(wf.dir);
  });

  it('says a clean workflow is valid, and 404s an unknown one; viewers may read it, anonymous callers may not', async () => {
    const clean = await t.server.inject({ method: 'GET', url: '/osm/api/workflows/clean/lint', headers: t.auth });
    expect(clean.json().data).toMatchObject({ valid: true, errors: 0, warnings: 0, issues: [] });
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/workflows/nope/lint', headers: t.auth })).statusCode).toBe(404);
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/workflows/clean/lint' })).statusCode).toBe(401);
  });
});
