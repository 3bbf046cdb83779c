/**
 * Path traversal on every name parameter: workflows/{name}, workflow-upload filename,
 * snapshots/{name}, snapshots/download/{name}, snapshot-download/{workspace}, workspaces/{name},
 * workspaces/{name}/state-file, upload-file filename and POST /runs target_file (there is no
 * artifact download route: GET /runs/{id}/artifacts only lists). Variants: `../`, `..%2f`,
 * `%2e%2e%2f`, double encoding, overlong UTF-8, absolute paths, backslashes, NUL, and symlinks
 * planted inside the server's folders that point outside. Canary files live outside the base
 * folder: no response may contain their secret, and none may be modified, removed or joined by
 * new files.
 *
 * URL variants go over a raw socket (`net.connect`): inject() and fetch() normalise dot segments
 * and encodings before the server would ever see them.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import unzipper from 'unzipper';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

const SECRET = `CANARY-${randomUUID()}`;
const SNAP = 'canary_1700000000.zip';

let t: TestServer;
let port: number;
let outside: string;
let canaryState: string;

/** Names, sizes, mtimes and contents of everything in the outside folder. */
function outsideState(): string {
  return fs
    .readdirSync(outside, { recursive: true, withFileTypes: true })
    .map((e) => {
      const p = path.join(e.parentPath, e.name);
      const st = fs.lstatSync(p);
      return `${path.relative(outside, p)}:${st.size}:${st.mtimeMs}:${st.isFile() ? fs.readFileSync(p, 'base64') : ''}`;
    })
    .sort()
    .join('\n');
}

interface RawResponse {
  status: number;
  headers: string;
  body: Buffer;
}

/** One request written byte for byte on a socket; the answer as received (chunked bodies joined). */
function raw(method: string, target: string, headers: Record<string, string> = t.auth): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.setTimeout(15_000, () => {
      sock.destroy();
      reject(new Error(`no answer to ${method} ${target}`));
    });
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1');
      let body = all.subarray(split + 4);
      if (/transfer-encoding:\s*chunked/i.test(head)) {
        const parts: Buffer[] = [];
        for (let i = 0; ; ) {
          const eol = body.indexOf('\r\n', i);
          const size = parseInt(body.subarray(i, eol).toString('latin1'), 16);
          if (!size) break;
          parts.push(body.subarray(eol + 2, eol + 2 + size));
          i = eol + 2 + size + 2;
        }
        body = Buffer.concat(parts);
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
    const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    sock.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  });
}

/** The same escape written every way a server might decode back into `../…/<outside>/<file>`. */
function variants(file: string): string[] {
  const ups = 12;
  const abs = path.join(outside, file);
  const enc = (s: string) => s.split('/').map(encodeURIComponent).join('%2f');
  const tail = enc(path.relative('/', abs));
  return [
    `${'..%2f'.repeat(ups)}${tail}`,
    `${'%2e%2e%2f'.repeat(ups)}${tail}`,
    `${'%2E%2E%2F'.repeat(ups)}${tail}`,
    `${'..%5c'.repeat(ups)}${tail.replace(/%2f/g, '%5c')}`,
    `${'%252e%252e%252f'.repeat(ups)}${tail}`,
    `${'%c0%ae%c0%ae%c0%af'.repeat(ups)}${tail}`,
    `${'....%2f%2f'.repeat(ups)}${tail}`,
    `%2f${tail}`,
    `${encodeURIComponent(file)}%00.zip`,
    `${encodeURIComponent(file)}%00`,
    '..',
    '%2e%2e',
    '.%2e',
    `..${'%5c'}..`,
  ];
}

/** Asserts the request was rejected and leaked nothing. */
function rejected(res: RawResponse, what: string): void {
  expect(res.status, `${what} → ${res.status} ${res.body.toString('utf8').slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  expect(res.status, what).toBeLessThan(500);
  expect(res.body.toString('latin1').includes(SECRET), `${what} leaked the canary`).toBe(false);
  if (/content-type:\s*application\/json/i.test(res.headers)) {
    const body = JSON.parse(res.body.toString('utf8'));
    expect(body, what).toEqual({ error: true, message: expect.any(String) });
  }
}

/** A multipart body with one file. */
function multipart(filename: string, content: string) {
  const b = `----trav${randomUUID()}`;
  const payload = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n--${b}--\r\n`;
  return { payload: Buffer.from(payload, 'latin1'), headers: { ...t.auth, 'content-type': `multipart/form-data; boundary=${b}` } };
}

beforeAll(async () => {
  t = await makeTestServer();
  await t.server.listen({ host: '127.0.0.1', port: 0 });
  port = (t.server.server.address() as net.AddressInfo).port;
  const paths = t.app.settings().paths;

  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-outside-'));
  fs.writeFileSync(path.join(outside, 'canary.txt'), `${SECRET}\n`);
  fs.writeFileSync(path.join(outside, 'canary.yaml'), `kind: module\nname: canary\ndescription: ${SECRET}\nsteps:\n  - name: s\n    type: bash\n    command: echo ${SECRET}\n`);
  fs.writeFileSync(path.join(outside, SNAP), `PK ${SECRET}`);
  fs.writeFileSync(path.join(outside, 'run-state.json'), JSON.stringify({ secret: SECRET }));
  fs.writeFileSync(path.join(outside, 'run-execution.log'), `${SECRET}\n`);

  // Links planted inside the server's own folders, pointing out.
  fs.mkdirSync(paths.workspaces, { recursive: true });
  fs.symlinkSync(outside, path.join(paths.workspaces, 'evil'));
  fs.mkdirSync(path.join(paths.workspaces, 'legit'), { recursive: true });
  fs.symlinkSync(path.join(outside, 'run-state.json'), path.join(paths.workspaces, 'legit', 'run-state.json'));
  fs.symlinkSync(path.join(outside, 'canary.txt'), path.join(paths.workspaces, 'legit', 'leak.txt'));
  fs.writeFileSync(path.join(paths.workspaces, 'legit', 'own.txt'), 'mine\n');
  fs.mkdirSync(paths.snapshot, { recursive: true });
  fs.symlinkSync(path.join(outside, SNAP), path.join(paths.snapshot, 'evil_1700000000.zip'));
  fs.mkdirSync(paths.uploads, { recursive: true });
  fs.symlinkSync(path.join(outside, 'canary.txt'), path.join(paths.uploads, 'link.txt'));
  canaryState = outsideState();
});

afterAll(async () => {
  await t?.close();
  if (outside) fs.rmSync(outside, { recursive: true, force: true });
});

describe('name parameters in the URL (raw socket)', () => {
  const routes: [string, string, (v: string) => string, string][] = [
    ['GET', 'workflow', (v) => `/osm/api/workflows/${v}`, 'canary.yaml'],
    ['GET', 'workflow (json)', (v) => `/osm/api/workflows/${v}?json=true`, 'canary.yaml'],
    ['GET', 'snapshot download', (v) => `/osm/api/snapshots/download/${v}`, SNAP],
    ['DELETE', 'snapshot delete', (v) => `/osm/api/snapshots/${v}`, SNAP],
    ['GET', 'legacy snapshot download', (v) => `/osm/api/snapshot-download/${v}`, ''],
    ['GET', 'workspace', (v) => `/osm/api/workspaces/${v}`, ''],
    ['GET', 'workspace state file', (v) => `/osm/api/workspaces/${v}/state-file?state_file=state_file`, ''],
    ['DELETE', 'workspace delete', (v) => `/osm/api/workspaces/${v}?purge_files=true`, ''],
  ];

  it.each(routes)('%s %s rejects every escape', async (method, what, url, file) => {
    for (const v of [...variants(file), ...variants('')]) rejected(await raw(method, url(v)), `${method} ${url(v)}`);
    expect(outsideState()).toBe(canaryState);
  });

  it('unencoded dot segments never reach a handler', async () => {
    for (const url of ['/osm/api/workflows/../../../../etc/passwd', '/osm/api/workspaces/../../..', '/osm/api/snapshots/download/..\\..\\x.zip', `/osm/api/snapshot-download/../${path.basename(outside)}`]) {
      rejected(await raw('GET', url), url);
    }
  });

  it('a literal NUL or control byte in the request line is refused', async () => {
    for (const url of ['/osm/api/workflows/canary\u0000.yaml', '/osm/api/workspaces/a\u0001b']) {
      const res = await raw('GET', url);
      expect(res.status).toBe(400);
      rejected(res, JSON.stringify(url));
      expect(JSON.parse(res.body.toString('utf8')).message).toBe('Malformed HTTP request');
    }
  });
});

describe('symlinks inside the server folders that point outside', () => {
  it('a workspace folder that is a link outside is refused everywhere', async () => {
    rejected(await raw('GET', '/osm/api/workspaces/evil'), 'GET workspace evil');
    rejected(await raw('GET', '/osm/api/workspaces/evil/state-file?state_file=state_file'), 'state file of evil');
    rejected(await raw('GET', '/osm/api/workspaces/evil/state-file?state_file=execution_log'), 'execution log of evil');
    rejected(await raw('GET', '/osm/api/snapshot-download/evil'), 'legacy snapshot of evil');
    const exp = await t.server.inject({ method: 'POST', url: '/osm/api/snapshots/export', headers: t.auth, payload: { workspace: 'evil' } });
    expect(exp.statusCode).toBeGreaterThanOrEqual(400);
    expect(exp.statusCode).toBeLessThan(500);
    expect(exp.body).not.toContain(SECRET);
    expect(outsideState()).toBe(canaryState);
  });

  it('a state file that is a link outside is refused', async () => {
    rejected(await raw('GET', '/osm/api/workspaces/legit/state-file?state_file=state_file'), 'linked run-state.json');
    for (const q of ['../../canary.txt', '..%2f..%2fcanary.txt', '%2fetc%2fpasswd', 'state_file%00']) {
      rejected(await raw('GET', `/osm/api/workspaces/legit/state-file?state_file=${q}`), `state_file=${q}`);
    }
  });

  it('a snapshot that is a link outside is neither served nor deleted', async () => {
    rejected(await raw('GET', '/osm/api/snapshots/download/evil_1700000000.zip'), 'download linked snapshot');
    rejected(await raw('DELETE', '/osm/api/snapshots/evil_1700000000.zip'), 'delete linked snapshot');
    const list = await t.server.inject({ method: 'GET', url: '/osm/api/snapshots', headers: t.auth });
    expect(list.json().data.map((s: { name: string }) => s.name)).not.toContain('evil_1700000000.zip');
    expect(outsideState()).toBe(canaryState);
  });

  it('an export of a workspace never follows a link inside it', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/snapshots/export', headers: t.auth, payload: { workspace: 'legit' } });
    expect(res.statusCode).toBe(200);
    const zip = await unzipper.Open.buffer(res.rawPayload);
    const names = zip.files.map((f) => f.path);
    expect(names).toContain('legit/own.txt');
    for (const f of zip.files) {
      if (f.type === 'File') expect((await f.buffer()).toString('latin1').includes(SECRET), f.path).toBe(false);
    }
    fs.rmSync(path.join(t.app.settings().paths.snapshot, res.headers['content-disposition']!.toString().replace(/^.*filename=/, '')), { force: true });
  });

  it('deleting a linked workspace removes the link only, never its target', async () => {
    const res = await raw('DELETE', '/osm/api/workspaces/evil?purge_files=true');
    expect(res.body.toString('latin1')).not.toContain(SECRET);
    expect(res.status).toBeLessThan(500);
    expect(outsideState()).toBe(canaryState);
  });
});

describe('file names in bodies', () => {
  const names = (file: string) => [
    `../../../../../../${path.relative('/', path.join(outside, file))}`,
    path.join(outside, file),
    `..\\..\\..\\..\\${file}`,
    `..%2f..%2f${file}`,
    `%2e%2e%2f%2e%2e%2f${file}`,
    `${file}\u0000.yaml`,
    `./../${file}`,
    `sub/dir/${file}`,
  ];

  it('upload-file stores every name inside the uploads folder, or refuses it', async () => {
    const uploads = t.app.settings().paths.uploads;
    for (const name of names('canary.txt')) {
      const res = await t.server.inject({ method: 'POST', url: '/osm/api/upload-file', ...multipart(name, 'owned\n') });
      expect(res.statusCode, name).toBeLessThan(500);
      if (res.statusCode === 200) {
        const body = res.json();
        expect(path.dirname(body.path), name).toBe(uploads);
        expect(body.filename, name).toMatch(/^\d+_[A-Za-z0-9._-]+$/);
        expect(body.filename.slice(body.filename.indexOf('_') + 1), name).not.toMatch(/^\./);
        fs.rmSync(body.path);
      }
    }
    expect(outsideState()).toBe(canaryState);
  });

  it('workflow-upload stores every name inside the workflows folder, or refuses it', async () => {
    const root = t.app.settings().paths.workflows;
    let i = 0;
    for (const name of names('canary.yaml')) {
      const content = `kind: module\nname: trav-${i++}\nsteps:\n  - name: s\n    type: bash\n    command: echo hi\n`;
      const res = await t.server.inject({ method: 'POST', url: '/osm/api/workflow-upload', ...multipart(name, content) });
      expect(res.statusCode, name).toBeLessThan(500);
      if (res.statusCode === 201) {
        const saved = res.json().path as string;
        expect(path.dirname(saved), name).toBe(path.join(root, 'modules'));
        expect(path.basename(saved), name).toMatch(/^[A-Za-z0-9_-][A-Za-z0-9._-]*\.ya?ml$/);
      }
    }
    expect(outsideState()).toBe(canaryState);
  });

  it('POST /runs refuses every target_file outside the uploads and data folders', async () => {
    const uploads = t.app.settings().paths.uploads;
    const before = (await t.server.inject({ method: 'GET', url: '/osm/api/runs', headers: t.auth })).json().pagination.total;
    const candidates = [
      ...names('canary.txt'),
      path.join(uploads, 'link.txt'),
      'link.txt',
      path.join(uploads, '..', '..', '..', path.relative('/', path.join(outside, 'canary.txt'))),
      `${uploads}/../../canary.txt`,
      '/etc/passwd',
      '/proc/self/environ',
      uploads,
    ];
    for (const target_file of candidates) {
      const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'sample-recon', target_file } });
      expect(res.statusCode, target_file).toBe(400);
      expect(res.body, target_file).not.toContain(SECRET);
      expect(res.json(), target_file).toEqual({ error: true, message: expect.stringMatching(/target_file|target/) });
    }
    const after = (await t.server.inject({ method: 'GET', url: '/osm/api/runs', headers: t.auth })).json().pagination.total;
    expect(after).toBe(before);
    expect(outsideState()).toBe(canaryState);
  });
});
