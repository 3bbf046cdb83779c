/**
 * Requests the daemon makes for an API client follow the outbound (SSRF) policy: the http
 * functions in /functions/eval and /functions/execute, and webhook targets written through
 * PUT /settings/yaml. Loopback in every spelling is refused unless server.outbound_allowlist
 * opens it; redirects are judged hop by hop.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { notifyRunFinished } from '../../src/events/webhooks.js';
import type { RunRecord } from '../../src/store/index.js';

interface Receiver {
  server: http.Server;
  port: number;
  hits: string[];
}

async function receiver(host: string, handler?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean): Promise<Receiver> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    req.resume();
    if (handler?.(req, res)) return;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${host}`);
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

let target: Receiver; // 127.0.0.1: the loopback service an attacker wants to reach
let other: Receiver; // 127.0.0.2: another loopback address, never allowlisted
let redirector: Receiver; // 127.0.0.1: redirects elsewhere
let t: TestServer;
let tmp: { dir: string; cleanup: () => void };

beforeAll(async () => {
  target = await receiver('127.0.0.1');
  other = await receiver('127.0.0.2');
  redirector = await receiver('127.0.0.1', (req, res) => {
    const to = req.url === '/to-other' ? `http://127.0.0.2:${other.port}/reached` : req.url === '/to-localhost' ? `http://localhost:${target.port}/reached` : req.url === '/to-metadata' ? 'http://169.254.169.254/latest/meta-data/' : `http://127.0.0.1:${target.port}/hop-ok`;
    res.writeHead(302, { location: to }).end();
    return true;
  });
});
afterAll(async () => {
  for (const r of [target, other, redirector]) await new Promise<void>((done) => r?.server.close(() => done()));
});
beforeEach(async () => {
  t = await makeTestServer();
  tmp = tempDir('osm-outbound-');
  for (const r of [target, other, redirector]) r.hits.length = 0;
});
afterEach(async () => {
  await t.close();
  tmp.cleanup();
});

const evalScript = async (script: string) => {
  const res = await t.server.inject({ method: 'POST', url: '/osm/api/functions/eval', headers: t.auth, payload: { script } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().result;
};
const allow = (list: string[]) => {
  (t.app.settings().settings.server as { outbound_allowlist: string[] }).outbound_allowlist = list;
};
const REFUSED = /is a loopback (address|name); add it to server\.outbound_allowlist to allow it/;

describe('http functions in /functions/eval', () => {
  it('refuse loopback in every spelling; the loopback service receives nothing', async () => {
    const p = target.port;
    for (const url of [
      `http://127.0.0.1:${p}/`,
      `http://2130706433:${p}/`,
      `http://0x7f000001:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://127.1:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[::ffff:7f00:1]:${p}/`,
      `http://[::1]:${p}/`,
      `http://localhost:${p}/`,
      `http://LOCALHOST.:${p}/`,
    ]) {
      const r = await evalScript(`http_get(${JSON.stringify(url)})`);
      expect(r.status_code, url).toBe(0);
      expect(r.error, url).toMatch(REFUSED);
    }
    const req = await evalScript(`httpRequest("http://2130706433:${p}/", "POST", {}, "x")`);
    expect(req.error).toMatch(REFUSED);
    expect((await evalScript(`http_post("http://0x7f000001:${p}/", {a: 1})`)).error).toMatch(REFUSED);
    expect(await evalScript(`wget("http://127.0.0.1:${p}/file", ${JSON.stringify(path.join(tmp.dir, 'f'))})`)).toBe(false);
    const exec = await t.server.inject({ method: 'POST', url: '/osm/api/functions/execute', headers: t.auth, payload: { expression: 'http_get(u).error', context: { u: `http://localhost:${p}/` } } });
    expect(exec.json().data.result).toMatch(REFUSED);
    expect(target.hits).toEqual([]);
    expect(fs.existsSync(path.join(tmp.dir, 'f'))).toBe(false);
  }, 60_000);

  it('refuse cloud metadata and private addresses, naming host and setting', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://10.0.0.1/', 'http://100.64.0.1/', 'http://0/']) {
      expect((await evalScript(`http_get(${JSON.stringify(url)}).error`)), url).toMatch(/^\S+ is an? [^;]+ address; add it to server\.outbound_allowlist to allow it$/);
    }
  });

  it('reach an address listed in server.outbound_allowlist (read live)', async () => {
    allow(['127.0.0.1']);
    const r = await evalScript(`http_get("http://127.0.0.1:${target.port}/allowed")`);
    expect(r).toMatchObject({ status_code: 200, error: null, response_body: 'hello from 127.0.0.1' });
    // The decimal spelling is the same address.
    expect((await evalScript(`http_get("http://2130706433:${target.port}/decimal").status_code`))).toBe(200);
    expect(target.hits).toEqual(['/allowed', '/decimal']);
    allow([]);
    expect((await evalScript(`http_get("http://127.0.0.1:${target.port}/again").error`))).toMatch(REFUSED);
    expect(target.hits).toEqual(['/allowed', '/decimal']);
  }, 60_000);

  it('judge every redirect hop: an allowlisted host cannot redirect to one that is not', async () => {
    allow(['127.0.0.1']);
    const base = `http://127.0.0.1:${redirector.port}`;
    const toOther = await evalScript(`http_get("${base}/to-other")`);
    expect(toOther.status_code).toBe(0);
    expect(toOther.error).toBe('127.0.0.2 is a loopback address; add it to server.outbound_allowlist to allow it');
    expect((await evalScript(`http_get("${base}/to-localhost").error`))).toMatch(/^localhost is a loopback name/);
    expect((await evalScript(`http_get("${base}/to-metadata").error`))).toMatch(/^169\.254\.169\.254 is a link-local \(cloud metadata\) address/);
    expect(other.hits).toEqual([]);
    expect(target.hits).toEqual([]);
    // A hop to an allowed address is followed.
    expect((await evalScript(`http_get("${base}/to-allowed")`))).toMatchObject({ status_code: 200, response_body: 'hello from 127.0.0.1' });
    expect(target.hits).toEqual(['/hop-ok']);
    expect(redirector.hits).toEqual(['/to-other', '/to-localhost', '/to-metadata', '/to-allowed']);
  }, 60_000);
});

describe('webhook targets written through PUT /settings/yaml', () => {
  const finished: RunRecord = {
    id: 1, run_uuid: '11111111-2222-3333-4444-555555555555', workflow_name: 'w', workflow_kind: 'module', target: 'example.com',
    params: {}, status: 'completed', workspace: 'example.com', started_at: '2030-01-01T00:00:00.000Z', completed_at: '2030-01-01T00:01:00.000Z',
    error_message: '', schedule_id: '', trigger_type: 'manual', trigger_name: '', run_group_id: 'j', priority: 'normal', priority_rank: 2,
    run_mode: 'local', total_steps: 1, completed_steps: 1, current_pid: 0, current_pid_start: '', hooks_enabled: false, timeout_seconds: 0,
    runner_type: 'host', options: {}, owner_pid: 0, owner_host: '', created_at: '2030-01-01T00:00:00.000Z', updated_at: '2030-01-01T00:01:00.000Z',
  };

  async function putSettings(edit: (doc: ReturnType<typeof parseDocument>) => void): Promise<void> {
    const redacted = (await t.server.inject({ method: 'GET', url: '/osm/api/settings/yaml', headers: t.auth })).body;
    const doc = parseDocument(redacted);
    edit(doc);
    const res = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: { ...t.auth, 'content-type': 'text/yaml' }, payload: doc.toString() });
    expect(res.statusCode, res.body).toBe(200);
  }

  it('a loopback webhook is refused and recorded as a failed delivery; allowlisting opens it', async () => {
    await putSettings((doc) => doc.set('notification', { enabled: true, webhooks: [{ url: `http://[::ffff:127.0.0.1]:${target.port}/hook`, enabled: true, retry_count: 3 }] }));
    const [refused] = await notifyRunFinished(t.app, finished, [], { backoffMs: 5 });
    expect(refused).toMatchObject({ delivered: false, attempts: 1 });
    expect(refused!.error).toMatch(REFUSED);
    const events = (await t.app.repos.events.list({ topic: 'webhook.delivery' }, { offset: 0, limit: 5 })).data;
    expect(events).toHaveLength(1);
    expect(events[0]!.error).toMatch(REFUSED);
    expect(target.hits).toEqual([]);

    await putSettings((doc) => doc.setIn(['server', 'outbound_allowlist'], ['127.0.0.1']));
    const [delivered] = await notifyRunFinished(t.app, finished, []);
    expect(delivered).toMatchObject({ delivered: true, status: 200 });
    expect(target.hits).toEqual(['/hook']);
  });
});

describe('workflows the operator runs are not subject to the policy', () => {
  it('an http_get in a function step reaches a loopback service (workflows scan private networks)', async () => {
    const wfDir = path.join(tmp.dir, 'wf');
    fs.mkdirSync(wfDir, { recursive: true });
    const out = path.join(tmp.dir, 'body.txt');
    const step = `write_file(${JSON.stringify(out)}, http_get("http://127.0.0.1:${target.port}/from-workflow").response_body)`;
    fs.writeFileSync(path.join(wfDir, 'loopback-scan.yaml'), `kind: module\nname: loopback-scan\nsteps:\n  - name: fetch\n    type: function\n    function: ${JSON.stringify(step)}\n`);
    const live = await makeTestServer({ withQueue: true, workflowFolder: wfDir });
    try {
      const res = await live.server.inject({ method: 'POST', url: '/osm/api/runs', headers: live.auth, payload: { module: 'loopback-scan', target: 'example.com' } });
      expect(res.statusCode).toBe(202);
      const uuid = res.json().run_uuid as string;
      const end = Date.now() + 60_000;
      while (!['completed', 'failed', 'cancelled'].includes((await live.app.repos.runs.getByUuid(uuid))!.status) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect((await live.app.repos.runs.getByUuid(uuid))!.status).toBe('completed');
      expect(target.hits).toEqual(['/from-workflow']);
      expect(fs.readFileSync(out, 'utf8')).toBe('hello from 127.0.0.1');
    } finally {
      await live.close();
    }
  }, 90_000);
});
