/**
 * Synchronous network access for the function library. Scripts are synchronous, so each call
 * spawns `node` with a small inline program that uses fetch/dns and answers one JSON line.
 * TLS verification is disabled (as the reference) only in that child's environment.
 */
import type { FnContext } from '../js-runtime.js';
import { runProgram } from './helpers.js';

/** The inline child program (CommonJS, reads one JSON request on stdin). */
const CHILD = String.raw`
const fs = require('node:fs');
const MAX = 10 * 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const canon = (k) => k.split('-').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('-');
const msg = (e) => (e && e.cause && e.cause.message) ? e.message + ': ' + e.cause.message : String(e && e.message || e);
async function readCapped(res) {
  const chunks = []; let size = 0;
  if (!res.body) return Buffer.alloc(0);
  for await (const c of res.body) { size += c.length; if (size > MAX) throw new Error('response body exceeds 10 MiB'); chunks.push(Buffer.from(c)); }
  return Buffer.concat(chunks);
}
async function request(q) {
  const start = Date.now(); let delay = 200;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(q.url, { method: q.method, headers: q.headers, body: q.body, redirect: 'follow', signal: AbortSignal.timeout(q.timeoutMs) });
      const buf = await readCapped(res);
      if (res.status >= 500 && attempt < 3) { await sleep(delay); delay = Math.min(delay * 2, 2000); continue; }
      const headers = {};
      res.headers.forEach((v, k) => { const n = canon(k); if (!(n in headers)) headers[n] = k === 'set-cookie' ? (res.headers.getSetCookie()[0] || v) : v; });
      return { status: res.status, headers, body: buf.toString('utf8'), bytes: buf.length, ms: Date.now() - start };
    } catch (e) {
      if (attempt < 3) { await sleep(delay); delay = Math.min(delay * 2, 2000); continue; }
      return { error: msg(e), ms: Date.now() - start };
    }
  }
}
async function lookup(q) {
  try {
    const all = await require('node:dns').promises.lookup(q.host, { all: true });
    const v4 = all.find((a) => a.family === 4);
    return { ip: (v4 || all[0] || {}).address || '' };
  } catch { return { ip: '' }; }
}
async function download(q) {
  const tmp = q.output + '.osm-part';
  const opts = (extra) => ({ headers: Object.assign({ 'User-Agent': q.ua }, extra || {}), redirect: 'follow', signal: AbortSignal.timeout(q.timeoutMs) });
  try {
    let size = 0, ranges = false;
    try {
      const h = await fetch(q.url, Object.assign({ method: 'HEAD' }, opts()));
      size = Number(h.headers.get('content-length') || 0);
      ranges = h.ok && (h.headers.get('accept-ranges') || '').toLowerCase() === 'bytes';
    } catch {}
    const fd = fs.openSync(tmp, 'w');
    try {
      if (ranges && size >= 1024 * 1024) {
        const part = Math.ceil(size / 4);
        await Promise.all([0, 1, 2, 3].map(async (i) => {
          const from = i * part, to = Math.min(size, from + part) - 1;
          if (from > to) return;
          const res = await fetch(q.url, opts({ Range: 'bytes=' + from + '-' + to }));
          if (res.status !== 206) throw new Error('range request answered ' + res.status);
          let pos = from;
          for await (const c of res.body) { fs.writeSync(fd, c, 0, c.length, pos); pos += c.length; }
        }));
      } else {
        const res = await fetch(q.url, opts());
        if (!res.ok) throw new Error('HTTP ' + res.status);
        if (res.body) for await (const c of res.body) fs.writeSync(fd, c);
      }
    } finally { fs.closeSync(fd); }
    fs.renameSync(tmp, q.output);
    return { ok: true };
  } catch (e) { try { fs.unlinkSync(tmp); } catch {} return { ok: false, error: msg(e) }; }
}
async function upload(q) {
  // multipart/form-data: text fields plus one file (Telegram sendDocument and the like)
  try {
    const form = new FormData();
    for (const [k, v] of Object.entries(q.fields || {})) form.append(k, String(v));
    const data = fs.readFileSync(q.file);
    form.append(q.fileField || 'file', new Blob([data]), q.fileName || require('node:path').basename(q.file));
    const res = await fetch(q.url, { method: 'POST', body: form, signal: AbortSignal.timeout(q.timeoutMs) });
    const buf = await readCapped(res);
    return { status: res.status, body: buf.toString('utf8') };
  } catch (e) { return { error: msg(e) }; }
}
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', async () => {
  const q = JSON.parse(input);
  const out = q.kind === 'dns' ? await lookup(q) : q.kind === 'download' ? await download(q) : q.kind === 'upload' ? await upload(q) : await request(q);
  process.stdout.write(JSON.stringify(out));
});
`;

/** Runs one child request; null when the child failed to answer (timeout, crash). */
export function runNetChild<T>(ctx: FnContext | undefined, request: Record<string, unknown>, capMs: number): T | null {
  const r = runProgram(ctx, process.execPath, ['-e', CHILD], {
    input: JSON.stringify(request),
    stdio: ['pipe', 'pipe', 'pipe'],
    capMs,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_TLS_REJECT_UNAUTHORIZED: '0', NODE_NO_WARNINGS: '1' },
  });
  if (r.error !== undefined || r.status !== 0) return null;
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    return null;
  }
}
