import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { call, tempDir } from './call.js';
import { evaluate } from '../../../src/engine/js-runtime.js';

// The functions are synchronous (they block this thread), so the test server runs in its own process.
const SERVER = String.raw`
const http = require('node:http');
const https = require('node:https');
const fs = require('node:fs');
let flaky = 0;
let ranges = 0;
const big = Buffer.alloc(2.5 * 1024 * 1024);
for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
const handler = (req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    if (req.url === '/ok') { res.setHeader('X-Test', 'yes'); res.end('hello'); return; }
    if (req.url === '/echo') { res.setHeader('Content-Type', 'application/json'); res.end(JSON.stringify({ method: req.method, ct: req.headers['content-type'] || '', ua: req.headers['user-agent'], body })); return; }
    if (req.url === '/flaky') { flaky++; if (flaky < 2) { res.statusCode = 503; res.end('busy'); return; } res.end('recovered after ' + flaky); return; }
    if (req.url === '/missing') { res.statusCode = 404; res.end('nope'); return; }
    if (req.url === '/file') { res.end('downloaded content'); return; }
    if (req.url === '/ranges') { res.end(String(ranges)); return; }
    if (req.url === '/big') {
      res.setHeader('Accept-Ranges', 'bytes');
      const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range || '');
      if (m) { ranges++; const part = big.subarray(Number(m[1]), Number(m[2]) + 1); res.statusCode = 206; res.setHeader('Content-Length', part.length); res.end(part); return; }
      res.setHeader('Content-Length', big.length);
      res.end(req.method === 'HEAD' ? undefined : big);
      return;
    }
    res.statusCode = 500; res.end('err');
  });
};
const server = http.createServer(handler).listen(0, '127.0.0.1', () => {
  const out = { port: server.address().port };
  if (process.argv[1]) {
    const tls = https.createServer({ key: fs.readFileSync(process.argv[1] + '/key.pem'), cert: fs.readFileSync(process.argv[1] + '/cert.pem') }, handler).listen(0, '127.0.0.1', () => {
      out.tls = tls.address().port;
      process.stdout.write(JSON.stringify(out) + '\n');
    });
  } else process.stdout.write(JSON.stringify(out) + '\n');
});
`;

const t = tempDir();
let child: ChildProcess;
let base = '';
let tlsBase = '';

beforeAll(async () => {
  const hasOpenssl = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(t.dir, 'key.pem'), '-out', path.join(t.dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' }).status === 0;
  child = spawn(process.execPath, ['-e', SERVER, ...(hasOpenssl ? [t.dir] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const info = await new Promise<{ port: number; tls?: number }>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c) => {
      buf += c;
      if (buf.includes('\n')) resolve(JSON.parse(buf));
    });
    child.on('exit', () => reject(new Error('test server exited')));
  });
  base = `http://127.0.0.1:${info.port}`;
  if (info.tls) tlsBase = `https://127.0.0.1:${info.tls}`;
});

afterAll(() => {
  child?.kill();
  t.cleanup();
});

describe('http functions', () => {
  it('http_get returns the structured response', () => {
    const r = call('http_get', `${base}/ok`) as Record<string, unknown>;
    expect(r.status_code).toBe(200);
    expect(r.error).toBeNull();
    expect(r.message).toBe('success');
    expect(r.response_body).toBe('hello');
    expect(r.content_length).toBe(5);
    expect((r.response_headers as Record<string, string>)['X-Test']).toBe('yes');
    expect(typeof r.response_time_ms).toBe('number');
    expect((call('httpGet', `${base}/missing`) as Record<string, unknown>).status_code).toBe(404);
  });

  it('http_get failure values', () => {
    const r = call('http_get', 'http://127.0.0.1:1/closed') as Record<string, unknown>;
    expect(r).toMatchObject({ status_code: 0, message: 'error', response_body: '', content_length: 0 });
    expect(typeof r.error).toBe('string');
    expect((call('http_get', '') as Record<string, unknown>).message).toBe('error');
    expect((call('http_get', 'file:///etc/passwd') as Record<string, unknown>).error).toMatch(/unsupported URL scheme/);
  });

  it('http_post sends JSON with Content-Type and the default User-Agent', () => {
    const r = call('http_post', `${base}/echo`, '{"k":"v"}') as Record<string, unknown>;
    const echoed = JSON.parse(r.response_body as string);
    expect(echoed).toMatchObject({ method: 'POST', ct: 'application/json', body: '{"k":"v"}' });
    expect(echoed.ua).toMatch(/Osmedeus/);
  });

  it('http_request / httpRequest: camelCase shape, caller headers kept', () => {
    const r = call('httpRequest', `${base}/echo`, 'PUT', { 'User-Agent': 'mine', 'Content-Type': 'text/plain' }, 'raw') as Record<string, unknown>;
    expect(r.statusCode).toBe(200);
    expect(r.error).toBe('');
    expect(JSON.parse(r.body as string)).toMatchObject({ method: 'PUT', ua: 'mine', ct: 'text/plain', body: 'raw' });
    const bad = call('http_request', 'http://127.0.0.1:1/') as Record<string, unknown>;
    expect(bad.statusCode).toBe(0);
    expect(bad.error).not.toBe('');
    expect(call('http_request', '')).toMatchObject({ statusCode: 0, body: '' });
  });

  it('retries on status >= 500', () => {
    const r = call('http_get', `${base}/flaky`) as Record<string, unknown>;
    expect(r.status_code).toBe(200);
    expect(r.response_body).toBe('recovered after 2');
  });

  it('does not verify TLS certificates for these calls only', () => {
    if (!tlsBase) return;
    const r = call('http_get', `${tlsBase}/ok`) as Record<string, unknown>;
    expect(r.status_code).toBe(200);
    expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).toBeUndefined();
  });

  it('works from scripts', () => {
    expect(evaluate('http_get(u).status_code', { u: `${base}/ok` }).value).toBe(200);
  });

  it('get_ip resolves hosts from URLs and host:port; "" when unresolvable', () => {
    expect(call('get_ip', 'http://localhost:8080/x')).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(call('get_ip', '127.0.0.1:9000')).toBe('127.0.0.1');
    expect(call('get_ip', 'no-such-host.invalid')).toBe('');
    expect(call('get_ip', '')).toBe('');
  });

  it('wget downloads natively', () => {
    const out = path.join(t.dir, 'dl', 'file.txt');
    expect(call('wget', `${base}/file`, out)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe('downloaded content');
    expect(call('wget', `${base}/missing`, path.join(t.dir, 'dl', 'missing.txt'))).toBe(false);
    expect(fs.existsSync(path.join(t.dir, 'dl', 'missing.txt'))).toBe(false);
  });

  it('wget uses parallel ranges for big files that allow them', () => {
    const out = path.join(t.dir, 'dl', 'big.bin');
    expect(call('wget', `${base}/big`, out)).toBe(true);
    const data = fs.readFileSync(out);
    expect(data.length).toBe(2.5 * 1024 * 1024);
    expect(data.every((b, i) => b === (i * 7) % 251)).toBe(true);
    expect((call('http_get', `${base}/ranges`) as Record<string, unknown>).response_body).toBe('4');
  });
});
