/**
 * Synchronous network access for the function library. Scripts are synchronous, so each call
 * spawns `node` with a small inline program that uses fetch/dns and answers one JSON line.
 * TLS verification is disabled (as the reference) only in that child's environment.
 *
 * A request may carry an outbound guard (src/util/outbound.ts): then the child connects through
 * an undici Agent whose socket lookup refuses loopback/private/metadata answers (the address
 * judged is the address connected to), follows redirects by hand and judges every hop, and
 * never retries a refusal. The guard's code is the same function the daemon uses, serialised.
 */
import { createRequire } from 'node:module';
import type { FnContext } from '../js-runtime.js';
import { runProgram } from './helpers.js';
import { ALLOWLIST_SETTING, outboundGuard, outboundGuardMain, REFUSED_CODE, type OutboundPolicy } from '../../util/outbound.js';

/** The inline child program (CommonJS, reads one JSON request on stdin). */
const CHILD = String.raw`
const fs = require('node:fs');
const MAX = 10 * 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const canon = (k) => k.split('-').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('-');
const msg = (e) => (e && e.refused) ? e.message : (e && e.cause && e.cause.message) ? e.message + ': ' + e.cause.message : String(e && e.message || e);
let doFetch = fetch;
let Form = FormData;
function guarded(g) {
  const undici = require(g.undici);
  const guard = (${outboundGuardMain.toString()})(require(g.ipaddr), require('node:dns').lookup, g.allowlist, g.setting, g.code);
  let refused = '';
  const agent = new undici.Agent({ connect: { lookup: guard.lookup((why) => { refused = why; }) } });
  const refusal = (why) => Object.assign(new Error(why), { refused: true });
  const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];
  Form = undici.FormData;
  // Redirects by hand: every hop is judged before it is requested (and again at connect time).
  doFetch = async (url, init) => {
    let current = new URL(url);
    let method = (init.method || 'GET').toUpperCase();
    let body = init.body;
    let headers = Object.assign({}, init.headers || {});
    for (let hop = 0; ; hop++) {
      if (current.protocol !== 'http:' && current.protocol !== 'https:') throw refusal('redirect to an unsupported URL scheme ' + current.protocol);
      const why = guard.checkUrl(current);
      if (why) throw refusal(why);
      refused = '';
      let res;
      try {
        res = await undici.fetch(current, Object.assign({}, init, { method, body, headers, redirect: 'manual', dispatcher: agent }));
      } catch (e) {
        if (refused) throw refusal(refused);
        throw e;
      }
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return res;
      try { await res.body?.cancel(); } catch {}
      if (hop >= 20) throw new Error('too many redirects');
      const next = new URL(location, current);
      if (next.origin !== current.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIALS.includes(k.toLowerCase())));
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) { if (method !== 'HEAD') method = 'GET'; body = undefined; }
      current = next;
    }
  };
}
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
      const res = await doFetch(q.url, { method: q.method, headers: q.headers, body: q.body, redirect: 'follow', signal: AbortSignal.timeout(q.timeoutMs) });
      const buf = await readCapped(res);
      if (res.status >= 500 && attempt < 3) { await sleep(delay); delay = Math.min(delay * 2, 2000); continue; }
      const headers = {};
      res.headers.forEach((v, k) => { const n = canon(k); if (!(n in headers)) headers[n] = k === 'set-cookie' ? (res.headers.getSetCookie()[0] || v) : v; });
      return { status: res.status, headers, body: buf.toString('utf8'), bytes: buf.length, ms: Date.now() - start };
    } catch (e) {
      if (attempt < 3 && !e.refused) { await sleep(delay); delay = Math.min(delay * 2, 2000); continue; }
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
      const h = await doFetch(q.url, Object.assign({ method: 'HEAD' }, opts()));
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
          const res = await doFetch(q.url, opts({ Range: 'bytes=' + from + '-' + to }));
          if (res.status !== 206) throw new Error('range request answered ' + res.status);
          let pos = from;
          for await (const c of res.body) { fs.writeSync(fd, c, 0, c.length, pos); pos += c.length; }
        }));
      } else {
        const res = await doFetch(q.url, opts());
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
    const form = new Form();
    for (const [k, v] of Object.entries(q.fields || {})) form.append(k, String(v));
    const data = fs.readFileSync(q.file);
    form.append(q.fileField || 'file', new Blob([data]), q.fileName || require('node:path').basename(q.file));
    const res = await doFetch(q.url, { method: 'POST', body: form, signal: AbortSignal.timeout(q.timeoutMs) });
    const buf = await readCapped(res);
    return { status: res.status, body: buf.toString('utf8') };
  } catch (e) { return { error: msg(e) }; }
}
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', async () => {
  const q = JSON.parse(input);
  if (q.guard) guarded(q.guard);
  const out = q.kind === 'dns' ? await lookup(q) : q.kind === 'download' ? await download(q) : q.kind === 'upload' ? await upload(q) : await request(q);
  process.stdout.write(JSON.stringify(out));
});
`;

const requireHere = createRequire(import.meta.url);
let modulePaths: { ipaddr: string; undici: string } | undefined;

/** What the child needs to apply `policy`: the allowlist and where its two modules live. */
function guardSpec(policy: OutboundPolicy): Record<string, unknown> {
  modulePaths ??= { ipaddr: requireHere.resolve('ipaddr.js'), undici: requireHere.resolve('undici') };
  return { ...modulePaths, allowlist: policy.allowlist ?? [], setting: ALLOWLIST_SETTING, code: REFUSED_CODE };
}

/**
 * Why `url` may not be requested under `policy` (a literal or localhost host, judged before any
 * child starts), or null; names are judged again by the child at connect time.
 */
export function refuseUrl(policy: OutboundPolicy | undefined, url: string): string | null {
  if (!policy) return null;
  try {
    return outboundGuard(policy).checkUrl(new URL(url));
  } catch {
    return null;
  }
}

/** Runs one child request (under `policy` when given); null when the child failed to answer (timeout, crash). */
export function runNetChild<T>(ctx: FnContext | undefined, request: Record<string, unknown>, capMs: number, policy?: OutboundPolicy): T | null {
  const r = runProgram(ctx, process.execPath, ['-e', CHILD], {
    input: JSON.stringify(policy ? { ...request, guard: guardSpec(policy) } : request),
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
