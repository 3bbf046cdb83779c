/**
 * Runs upload their artifacts to object storage (storage.upload_outputs), and
 * GET /osm/api/artifacts/{workspace} serves a file that is only in storage — streamed, or as a
 * 302 to a presigned URL (storage.serve: redirect). An upload failure is a warning event and the
 * run still completes; the secret key appears in no event, log or API answer. Against s3rver on
 * loopback (test/helpers/s3.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { editSettingsFile, startS3, type S3Fixture } from '../helpers/s3.js';

const s3 = await startS3();

describe.skipIf(!s3)('artifacts and object storage', () => {
  const fx = s3 as S3Fixture;
  let wfDir: string;
  let t: TestServer;
  let raw: S3Client;

  const setStorage = async (values: Record<string, unknown>) => {
    await editSettingsFile(t.app.settings().file, values);
    t.app.manager.reload();
  };

  async function runAndWait(target: string): Promise<{ id: number; run_uuid: string; status: string; workspace: string }> {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'artifacty', target } });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const run = await t.app.repos.runs.getByUuid(uuid);
      if (run && ['completed', 'failed', 'cancelled'].includes(run.status)) {
        // the upload follows the final status: wait for its event
        const ev = (await t.app.repos.events.list({ run_id: uuid } as never, { offset: 0, limit: 50 })).data.find((e) => e.topic.startsWith('storage.'));
        if (ev) return run;
      }
      if (Date.now() > deadline) throw new Error(`run ${uuid} did not finish with an upload event`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const storageEvents = async (uuid: string) => (await t.app.repos.events.list({ run_id: uuid } as never, { offset: 0, limit: 50 })).data.filter((e) => e.topic.startsWith('storage.'));

  beforeAll(async () => {
    wfDir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-wf-storage-'));
    fs.mkdirSync(path.join(wfDir, 'modules'));
    fs.writeFileSync(
      path.join(wfDir, 'modules', 'artifacty.yaml'),
      [
        'kind: module',
        'name: artifacty',
        'steps:',
        '  - name: write',
        '    type: bash',
        '    command: mkdir -p "{{Output}}/out" && printf "report for %s\\n" "{{Target}}" > "{{Output}}/out/report.txt"',
        '  - name: keep',
        '    type: function',
        '    function: store_artifact("{{Output}}/out/report.txt")',
        '  - name: share',
        '    type: function',
        '    function: cdn_upload("{{Output}}/out/report.txt", "direct/{{Target}}/report.txt")',
        '',
      ].join('\n'),
    );
    t = await makeTestServer({ workflowFolder: wfDir, withQueue: true });
    await setStorage({ ...fx.storage, upload_outputs: true });
    raw = new S3Client({ endpoint: fx.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: fx.accessKeyId, secretAccessKey: fx.secretAccessKey } });
  });
  afterAll(async () => {
    raw?.destroy();
    await t?.close();
    await fx.close();
    fs.rmSync(wfDir, { recursive: true, force: true });
  });

  it('uploads the artifacts of a finished run under workspaces/<workspace>/<path>', async () => {
    const run = await runAndWait('up.example');
    expect(run.status).toBe('completed');
    const obj = await raw.send(new GetObjectCommand({ Bucket: fx.bucket, Key: 'workspaces/up.example/out/report.txt' }));
    expect(await obj.Body!.transformToString()).toBe('report for up.example\n');
    // a workflow's own cdn_* call (in an evaluator process) uses the storage settings too
    const direct = await raw.send(new GetObjectCommand({ Bucket: fx.bucket, Key: 'direct/up.example/report.txt' }));
    expect(await direct.Body!.transformToString()).toBe('report for up.example\n');
    const [ev] = await storageEvents(run.run_uuid);
    expect(ev).toMatchObject({ topic: 'storage.uploaded', workspace: 'up.example' });
    const data = JSON.parse(ev!.data as unknown as string) as { uploaded: number; keys: string[]; errors: unknown[] };
    // the run's state files are artifacts of the run too
    expect(data.keys.sort()).toEqual(['out/report.txt', 'run-completed.json', 'run-console.log', 'run-execution.log', 'run-state.json', 'run-workflow.yaml'].map((k) => `workspaces/up.example/${k}`));
    expect(data).toMatchObject({ uploaded: 6, errors: [] });
  });

  it('streams an artifact from storage when the local file is gone (storage.serve: stream)', async () => {
    fs.rmSync(path.join(t.app.settings().paths.workspaces, 'up.example'), { recursive: true, force: true });
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/artifacts/up.example?artifact_path=out/report.txt', headers: t.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toBe('report for up.example\n');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    // the path checks come first, storage or not
    const bad = await t.server.inject({ method: 'GET', url: '/osm/api/artifacts/up.example?artifact_path=../../osm-settings.yaml', headers: t.auth });
    expect(bad.statusCode).toBe(400);
    const abs = await t.server.inject({ method: 'GET', url: '/osm/api/artifacts/up.example?artifact_path=/etc/passwd', headers: t.auth });
    expect(abs.statusCode).toBe(400);
    const missing = await t.server.inject({ method: 'GET', url: '/osm/api/artifacts/up.example?artifact_path=out/none.txt', headers: t.auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: true, message: 'Artifact not found' });
    // access is unchanged: no credential, no file
    const anon = await t.server.inject({ method: 'GET', url: '/osm/api/artifacts/up.example?artifact_path=out/report.txt' });
    expect(anon.statusCode).toBe(401);
  });

  it('redirects to a presigned URL with storage.serve: redirect', async () => {
    await setStorage({ serve: 'redirect' });
    try {
      const res = await t.server.inject({ method: 'GET', url: '/osm/api/artifacts/up.example?artifact_path=out/report.txt', headers: t.auth });
      expect(res.statusCode).toBe(302);
      const location = String(res.headers.location);
      expect(location.startsWith(`${fx.endpoint}/${fx.bucket}/workspaces/up.example/out/report.txt?`)).toBe(true);
      expect(location).toContain('X-Amz-Expires=300');
      expect(location).toContain('response-content-disposition=attachment');
      const body = await fetch(location);
      expect(body.status).toBe(200);
      expect(await body.text()).toBe('report for up.example\n');
      const missing = await t.server.inject({ method: 'GET', url: '/osm/api/artifacts/up.example?artifact_path=out/none.txt', headers: t.auth });
      expect(missing.statusCode).toBe(404);
    } finally {
      await setStorage({ serve: 'stream' });
    }
  });

  it('API evaluations get no storage credentials (deny by default)', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/functions/eval', headers: t.auth, payload: { script: "cdn_exists('workspaces/up.example/out/report.txt')" } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toBe(false);
  });

  it('a failed upload is a warning event, the run still completes, and the secret is nowhere', async () => {
    await setStorage({ access_key_id: 'AKIANOTREGISTERED0' });
    try {
      const run = await runAndWait('fail.example');
      expect(run.status).toBe('completed');
      const [ev] = await storageEvents(run.run_uuid);
      expect(ev).toMatchObject({ topic: 'storage.upload_failed', data_type: 'warning' });
      expect(ev!.error).toContain('storage request failed');
      const events = await t.server.inject({ method: 'GET', url: `/osm/api/events?run_id=${run.run_uuid}`, headers: t.auth });
      const steps = await t.server.inject({ method: 'GET', url: `/osm/api/runs/${run.run_uuid}/steps`, headers: t.auth });
      const settings = await t.server.inject({ method: 'GET', url: '/osm/api/settings/yaml', headers: t.auth });
      for (const text of [JSON.stringify(ev), events.body, steps.body, settings.body]) {
        expect(text).not.toContain(fx.secretAccessKey);
        expect(text).not.toContain('AKIANOTREGISTERED0');
      }
      // the run's own log files hold no secret either
      const logs = fs.readdirSync(path.join(t.app.settings().paths.workspaces, 'fail.example'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      for (const e of logs) expect(fs.readFileSync(path.join(e.parentPath, e.name), 'utf8')).not.toContain(fx.secretAccessKey);
    } finally {
      await setStorage({ access_key_id: fx.accessKeyId });
    }
  });
});
