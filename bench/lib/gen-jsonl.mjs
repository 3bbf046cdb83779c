/**
 * Synthetic scanner output, streamed to disk (never held in memory): httpx-like host records and
 * nuclei-like findings, deterministic for a given count so re-imports see identical lines.
 */
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';

const TECH = [['nginx'], ['Apache HTTP Server', 'PHP:8.1'], ['Cloudflare'], ['Microsoft IIS:10.0', 'ASP.NET'], ['Envoy'], ['Amazon S3']];
const TITLES = ['Welcome', 'Login', '403 Forbidden', 'Dashboard', 'Not Found', 'API Gateway'];
const STATUS = [200, 200, 200, 301, 302, 403, 404, 500];
const SEV = ['info', 'info', 'info', 'low', 'low', 'medium', 'medium', 'high', 'critical', 'info'];

/** The i-th httpx-like record as one JSON line (~450 bytes). */
export function httpxLine(i) {
  const host = `h${i}.s${i % 997}.bench-${i % 13}.example.com`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return JSON.stringify({
    timestamp: '2026-01-15T10:30:00.123456789Z',
    url: `https://${host}`,
    input: host,
    host,
    port: '443',
    scheme: 'https',
    method: 'GET',
    path: '/',
    title: TITLES[i % TITLES.length],
    webserver: TECH[i % TECH.length][0],
    content_type: 'text/html',
    content_length: 1000 + (i % 50_000),
    status_code: STATUS[i % STATUS.length],
    words: 100 + (i % 900),
    lines: 10 + (i % 90),
    tech: TECH[i % TECH.length],
    a: [ip],
    host_ip: ip,
    cdn: i % 10 === 0,
    cdn_name: i % 10 === 0 ? 'cloudflare' : undefined,
    time: `${(i % 900) + 100}.${i % 1000}ms`,
    failed: false,
  });
}

/** The i-th nuclei-like finding as one JSON line (~650 bytes). */
export function nucleiLine(i) {
  const host = `h${i >> 2}.s${i % 997}.bench-${i % 13}.example.com`;
  const template = `bench-template-${i % 400}`;
  return JSON.stringify({
    'template-id': template,
    'template-path': `/root/nuclei-templates/http/${template}.yaml`,
    info: {
      name: `Benchmark finding ${i % 400}`,
      author: ['osm'],
      tags: ['bench', `t${i % 17}`],
      description: 'A synthetic finding used by the ingest benchmark; it only has to look like nuclei output.',
      severity: SEV[i % SEV.length],
    },
    type: 'http',
    host,
    'matched-at': `https://${host}/path-${i}`,
    'matcher-name': `m${i % 3}`,
    ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    timestamp: '2026-01-15T10:30:00.123456789Z',
    request: `GET /path-${i} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: Mozilla/5.0\r\n\r\n`,
    response: 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>ok</html>',
    'curl-command': `curl -X 'GET' 'https://${host}/path-${i}'`,
    'matcher-status': true,
  });
}

/** Writes `count` lines made by `lineOf(i)` to `file`, honouring back-pressure; resolves with the byte size. */
export async function writeJsonl(file, count, lineOf) {
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  let bytes = 0;
  let buf = '';
  for (let i = 0; i < count; i++) {
    buf += `${lineOf(i)}\n`;
    if (buf.length > 1 << 20 || i === count - 1) {
      bytes += Buffer.byteLength(buf);
      if (!out.write(buf)) await new Promise((r) => out.once('drain', r));
      buf = '';
    }
  }
  out.end();
  await finished(out);
  return bytes;
}
