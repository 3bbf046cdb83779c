/** Outbound webhooks against a local HTTP server: success, retry after 500, timeout, filters, recorded attempts. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { readFileSync } from 'node:fs';
import { createAppContext, type SqliteAppContext as AppContext } from '../../../src/services/context.js';
import { notifyRunFinished, runPayload, urlHost } from '../../../src/events/webhooks.js';
import type { RunRecord } from '../../../src/store/index.js';
import { tempDir } from '../../helpers/tmp.js';

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

let server: http.Server;
let base: string;
let hits: Hit[];
let flakyCount: number;
const sockets = new Set<import('node:net').Socket>();

beforeEach(async () => {
  hits = [];
  flakyCount = 0;
  server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(data || 'null') });
      if (req.url?.startsWith('/ok')) return void res.writeHead(200).end('ok');
      if (req.url?.startsWith('/flaky')) {
        flakyCount += 1;
        return void res.writeHead(flakyCount === 1 ? 500 : 204).end();
      }
      if (req.url?.startsWith('/fail')) return void res.writeHead(503).end('down');
      // /hang: never answers
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

const apps: { app: AppContext; cleanup: () => void }[] = [];
afterEach(() => {
  while (apps.length) {
    const a = apps.pop()!;
    a.app.close();
    a.cleanup();
  }
});

/** An app whose settings carry `notification`; the loopback receiver is allowlisted unless `allowlist` says otherwise. */
function appWith(notification: Record<string, unknown>, allowlist: string[] = ['127.0.0.1']): AppContext {
  const { dir, cleanup } = tempDir('osm-test-');
  const app = createAppContext({ baseFolder: dir });
  apps.push({ app, cleanup });
  const doc = parseDocument(readFileSync(app.manager.path, 'utf8'));
  doc.set('notification', notification);
  doc.setIn(['server', 'outbound_allowlist'], allowlist);
  app.manager.replaceText(doc.toString());
  return app;
}

function run(status: 'completed' | 'failed' | 'cancelled' | 'running' = 'completed'): RunRecord {
  return {
    id: 1, run_uuid: '11111111-2222-3333-4444-555555555555', workflow_name: 'sample-recon', workflow_kind: 'module', target: 'example.com',
    params: {}, status, workspace: 'example.com', started_at: '2030-01-01T00:00:00.000Z', completed_at: '2030-01-01T00:01:03.200Z',
    error_message: status === 'failed' ? 'step x failed' : '', schedule_id: '', trigger_type: 'manual', trigger_name: '', run_group_id: 'j',
    priority: 'normal', priority_rank: 2, run_mode: 'local', total_steps: 1, completed_steps: 1, current_pid: 0, current_pid_start: '', hooks_enabled: false,
    timeout_seconds: 0, runner_type: 'host', options: {}, owner_pid: 0, owner_host: '', created_at: '2030-01-01T00:00:00.000Z', updated_at: '2030-01-01T00:01:03.200Z',
  };
}

function deliveries(app: AppContext) {
  return app.store.events.list({ topic: 'webhook.delivery' }, { offset: 0, limit: 50 }).data.reverse();
}

describe('runPayload', () => {
  it('has the spec shape with duration in seconds and artifact paths', () => {
    const p = runPayload(run(), ['/w/a.txt', { artifact_path: '/w/b.md' } as never], new Date('2030-01-01T00:02:00Z'))!;
    expect(p).toEqual({
      event: 'workflow_completed',
      timestamp: '2030-01-01T00:02:00.000Z',
      data: { workflow: 'sample-recon', kind: 'module', target: 'example.com', status: 'completed', duration: 63.2, run_uuid: run().run_uuid, error: '', artifacts: ['/w/a.txt', '/w/b.md'], message: '' },
    });
    expect(runPayload(run('running'), [])).toBeUndefined();
    expect(runPayload(run('failed'), [])!.event).toBe('workflow_failed');
  });

  it('urlHost keeps only the host', () => {
    expect(urlHost('https://hooks.slack.com/services/T000/B000/SECRET?x=1')).toBe('hooks.slack.com');
  });
});

describe('notifyRunFinished', () => {
  it('POSTs the payload with the configured headers and records the attempt without secrets', async () => {
    const app = appWith({ enabled: true, webhooks: [{ url: `${base}/ok/SECRETPATH?token=SECRETQ`, enabled: true, headers: { Authorization: 'Bearer TOPSECRET' } }] });
    const res = await notifyRunFinished(app, run(), ['/w/a.txt']);
    expect(res).toEqual([{ url_host: new URL(base).host, delivered: true, attempts: 1, status: 200, error: '' }]);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.headers.authorization).toBe('Bearer TOPSECRET');
    expect(hits[0]!.headers['content-type']).toBe('application/json');
    expect(hits[0]!.body).toMatchObject({ event: 'workflow_completed', data: { run_uuid: run().run_uuid, artifacts: ['/w/a.txt'] } });
    const recorded = deliveries(app);
    expect(recorded).toHaveLength(1);
    expect(JSON.parse(recorded[0]!.data)).toMatchObject({ url_host: new URL(base).host, status: 200, attempt: 1, error: '' });
    const all = JSON.stringify(recorded);
    expect(all).not.toContain('TOPSECRET');
    expect(all).not.toContain('SECRETPATH');
    expect(all).not.toContain('SECRETQ');
  });

  it('retries after a 500 and succeeds on the second attempt', async () => {
    const app = appWith({ enabled: true, webhooks: [{ url: `${base}/flaky`, enabled: true, retry_count: 3 }] });
    const [res] = await notifyRunFinished(app, run('failed'), [], { backoffMs: 5 });
    expect(res).toMatchObject({ delivered: true, attempts: 2, status: 204 });
    expect(hits).toHaveLength(2);
    const recorded = deliveries(app).map((e) => JSON.parse(e.data));
    expect(recorded.map((d) => [d.attempt, d.status, d.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 204, ''],
    ]);
  });

  it('gives up after retry_count attempts and records each failure', async () => {
    const app = appWith({ enabled: true, webhooks: [{ url: `${base}/fail`, enabled: true, retry_count: 2 }] });
    const [res] = await notifyRunFinished(app, run(), [], { backoffMs: 5 });
    expect(res).toMatchObject({ delivered: false, attempts: 2, status: 503, error: 'HTTP 503' });
    expect(hits).toHaveLength(2);
    expect(deliveries(app).map((e) => e.error)).toEqual(['HTTP 503', 'HTTP 503']);
  });

  it('times out a webhook that never answers', async () => {
    const app = appWith({ enabled: true, webhooks: [{ url: `${base}/hang`, enabled: true, timeout: 1, retry_count: 1 }] });
    const [res] = await notifyRunFinished(app, run(), []);
    expect(res).toMatchObject({ delivered: false, attempts: 1, status: 0 });
    expect(res!.error).toMatch(/timed out after 1s/);
    expect(deliveries(app)[0]!.error).toMatch(/timed out/);
  });

  it('records a connection failure', async () => {
    const app = appWith({ enabled: true, webhooks: [{ url: 'http://127.0.0.1:1/x', enabled: true, retry_count: 1 }] });
    const [res] = await notifyRunFinished(app, run(), []);
    expect(res!.delivered).toBe(false);
    expect(res!.error).not.toBe('');
    expect(deliveries(app)).toHaveLength(1);
  });

  it('honours the master switch, the entry switch and the events filter', async () => {
    const off = appWith({ enabled: false, webhooks: [{ url: `${base}/ok`, enabled: true }] });
    expect(await notifyRunFinished(off, run(), [])).toEqual([]);
    const app = appWith({
      enabled: true,
      webhooks: [
        { url: `${base}/ok/disabled`, enabled: false },
        { url: `${base}/ok/failed-only`, enabled: true, events: ['workflow_failed'] },
        { url: `${base}/ok/all`, enabled: true },
      ],
    });
    await notifyRunFinished(app, run('completed'), []);
    expect(hits.map((h) => h.path)).toEqual(['/ok/all']);
    hits = [];
    await notifyRunFinished(app, run('cancelled'), []);
    expect(hits.map((h) => (h.body as { event: string }).event)).toEqual(['workflow_cancelled']);
    hits = [];
    await notifyRunFinished(app, run('running'), []);
    expect(hits).toHaveLength(0);
    expect(off.store.events.list({ topic: 'webhook.delivery' }, { offset: 0, limit: 5 }).total).toBe(0);
  });
});

describe('the outbound policy (webhook targets come from settings API clients can write)', () => {
  it('refuses a loopback target unless allowlisted: no request, one failed delivery recorded with the reason, no retries', async () => {
    for (const url of [`${base}/ok/a`, base.replace('127.0.0.1', 'localhost') + '/ok/b', base.replace('127.0.0.1', '[::ffff:127.0.0.1]') + '/ok/c', base.replace('127.0.0.1', '2130706433') + '/ok/d', base.replace('127.0.0.1', '0x7f000001') + '/ok/e']) {
      const app = appWith({ enabled: true, webhooks: [{ url, enabled: true, retry_count: 3 }] }, []);
      const [res] = await notifyRunFinished(app, run(), [], { backoffMs: 5 });
      expect(res, url).toMatchObject({ delivered: false, attempts: 1, status: 0 });
      expect(res!.error, url).toMatch(/is a loopback (address|name); add it to server\.outbound_allowlist to allow it$/);
      const recorded = deliveries(app);
      expect(recorded, url).toHaveLength(1);
      expect(recorded[0]!.error).toBe(res!.error);
      expect(JSON.parse(recorded[0]!.data)).toMatchObject({ delivered: false, attempt: 1 });
    }
    expect(hits).toHaveLength(0);
  });

  it('an allowlist entry for another address does not open loopback; the right entry does', async () => {
    const other = appWith({ enabled: true, webhooks: [{ url: `${base}/ok/x`, enabled: true }] }, ['10.0.0.0/8', 'hooks.example.com', '127.0.0.2']);
    expect((await notifyRunFinished(other, run(), []))[0]!.delivered).toBe(false);
    expect(hits).toHaveLength(0);
    const cidr = appWith({ enabled: true, webhooks: [{ url: `${base}/ok/y`, enabled: true }] }, ['127.0.0.0/8']);
    expect((await notifyRunFinished(cidr, run(), []))[0]!.delivered).toBe(true);
    expect(hits.map((h) => h.path)).toEqual(['/ok/y']);
  });

  it('refuses cloud metadata and private addresses', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://[fd00:ec2::254]/', 'http://100.64.0.1/']) {
      const app = appWith({ enabled: true, webhooks: [{ url, enabled: true, retry_count: 2, timeout: 1 }] }, []);
      const [res] = await notifyRunFinished(app, run(), []);
      expect(res!.error, url).toMatch(/add it to server\.outbound_allowlist to allow it$/);
      expect(res!.attempts).toBe(1);
    }
  });
});
