import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { epochNanos } from '../../src/services/uploads.js';

/** A multipart/form-data body for inject(). */
function multipart(fields: Record<string, string>, file?: { field?: string; name: string; content: string | Buffer }) {
  const boundary = `----osmtest${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name}"\r\nContent-Type: text/plain\r\n\r\n`));
    chunks.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

let t: TestServer;
let uploads: string;

beforeAll(async () => {
  t = await makeTestServer();
  uploads = t.app.settings().paths.uploads;
});

afterAll(async () => {
  await t?.close();
});

const upload = (fields: Record<string, string>, file?: { field?: string; name: string; content: string | Buffer }, headers: Record<string, string> = t.auth) => {
  const m = multipart(fields, file);
  return t.server.inject({ method: 'POST', url: '/osm/api/upload-file', payload: m.payload, headers: { ...m.headers, ...headers } });
};

describe('POST /osm/api/upload-file', () => {
  it('requires authentication', async () => {
    const res = await upload({}, { name: 'a.txt', content: 'x\n' }, {});
    expect(res.statusCode).toBe(401);
  });

  it('stores the file under a nanosecond-timestamp prefix and counts size and lines', async () => {
    const before = epochNanos();
    const res = await upload({}, { name: 'targets.txt', content: 'a.com\nb.com\nc.com' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['filename', 'lines', 'message', 'path', 'size']);
    expect(body).toMatchObject({ message: 'File uploaded', size: 17, lines: 3 });
    const m = /^(\d+)_targets\.txt$/.exec(body.filename);
    expect(m).not.toBeNull();
    const stamp = BigInt(m![1]!);
    expect(stamp).toBeGreaterThan(before);
    // A real epoch in nanoseconds: within a minute of the wall clock.
    expect(Number(stamp / 1_000_000n)).toBeGreaterThan(Date.now() - 60_000);
    expect(Number(stamp / 1_000_000n)).toBeLessThanOrEqual(Date.now() + 1);
    expect(body.path).toBe(path.join(uploads, body.filename));
    expect(fs.readFileSync(body.path, 'utf8')).toBe('a.com\nb.com\nc.com');
  });

  it('counts lines as newlines, +1 when the last byte is not a newline', async () => {
    const cases: [string, number][] = [['', 0], ['x', 1], ['x\n', 1], ['x\ny\n', 2], ['\n\n', 2], ['x\r\ny', 2]];
    for (const [content, lines] of cases) {
      const res = await upload({}, { name: 'l.txt', content });
      expect(res.json().lines, JSON.stringify(content)).toBe(lines);
      expect(res.json().size).toBe(Buffer.byteLength(content));
    }
  });

  it('sanitises the name (no path traversal)', async () => {
    const res = await upload({}, { name: '../../../etc/evil name;$(id).txt', content: 'x\n' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.filename).toMatch(/^\d+_evil_name___id_\.txt$/);
    expect(path.dirname(body.path)).toBe(uploads);
  });

  it('400 No file provided', async () => {
    for (const res of [
      await upload({ other: 'x' }),
      await upload({}, { field: 'notfile', name: 'a.txt', content: 'x' }),
      await t.server.inject({ method: 'POST', url: '/osm/api/upload-file', headers: t.auth, payload: { file: 'x' } }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'No file provided' });
    }
  });

  it('413 over server.max_upload_mb, leaving no partial file', async () => {
    const srv = t.app.settings().settings.server as { max_upload_mb?: number };
    const old = srv.max_upload_mb;
    srv.max_upload_mb = 1;
    try {
      const before = fs.readdirSync(uploads).length;
      const res = await upload({}, { name: 'big.txt', content: Buffer.alloc(1024 * 1024 + 10, 0x61) });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ error: true, message: 'File is too large (limit 1 MB)' });
      expect(fs.readdirSync(uploads).length).toBe(before);
      const ok = await upload({}, { name: 'fits.txt', content: Buffer.alloc(1024 * 1024, 0x61) });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().size).toBe(1024 * 1024);
    } finally {
      srv.max_upload_mb = old;
    }
  });

  it('the uploaded path is accepted as target_file by POST /runs', async () => {
    const up = (await upload({}, { name: 'list.txt', content: 'one.com\ntwo.com\n' })).json();
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'sample-recon', target_file: up.path } });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ target_count: 2, targets: ['one.com', 'two.com'] });
  });
});
