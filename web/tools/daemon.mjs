/**
 * The built daemon on a temporary base folder, with a little data (for the screenshots and the
 * benchmarks; tests use test/helpers/daemon.ts): runs of the sample workflows, assets, findings,
 * a schedule. Everything goes through the API with the settings' API key.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'osm.js');

function cleanEnv() {
  const env = { ...process.env, NO_COLOR: '1' };
  for (const k of ['OSM_BASE_FOLDER', 'OSM_SERVER', 'OSM_API_KEY', 'OSM_SETTINGS']) delete env[k];
  return env;
}

/** Starts `osm serve` on a fresh (or given) base folder; resolves with url, apiKey, user, password, stop(). */
export async function startDaemon(opts = {}) {
  const base = opts.base ?? fs.mkdtempSync(path.join(os.tmpdir(), 'osm-web-'));
  const child = spawn(process.execPath, [BIN, '-b', base, 'serve', '--host', '127.0.0.1', '--port', '0', '--no-schedule', ...(opts.args ?? [])], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const port = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`daemon did not start:\n${out}`)), 30_000);
    child.stdout.on('data', () => {
      const m = /listening on \S+ \(http:\/\/127\.0\.0\.1:(\d+)\)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`daemon exited (${code}):\n${out}`)));
  });
  const settings = parseYaml(fs.readFileSync(path.join(base, 'osm-settings.yaml'), 'utf8'));
  const [user, password] = Object.entries(settings.server.simple_user_map_key ?? {})[0] ?? [];
  const url = `http://127.0.0.1:${port}`;
  const apiKey = String(settings.server.auth_api_key);
  return {
    base,
    url,
    apiKey,
    user,
    password,
    output: () => out,
    api: (method, p, body) => api(url, apiKey, method, p, body),
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      if (!opts.keep) fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

/** One JSON request with the API key; throws on an error status. */
export async function api(url, apiKey, method, p, body) {
  const res = await fetch(`${url}${p}`, {
    method,
    headers: { 'x-osm-api-key': apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${text}`);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Waits until `fn` returns something truthy (polling every 200 ms). */
export async function until(fn, what, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Data for the pages to show: two finished runs, assets, findings of every severity, a schedule. */
export async function seed(d) {
  const runs = [];
  for (const target of ['example.com', 'acme.test']) {
    const r = await d.api('POST', '/osm/api/runs', { module: 'sample-recon', target });
    runs.push(r.run_uuid);
  }
  await until(async () => {
    const list = await d.api('GET', '/osm/api/runs?limit=10');
    return list.data.every((r) => ['completed', 'failed', 'cancelled'].includes(r.status));
  }, 'seed runs to finish');
  const techs = [['nginx'], ['react', 'cloudflare'], ['apache', 'php'], ['express'], []];
  for (let i = 0; i < 24; i++) {
    const host = `${['www', 'api', 'dev', 'mail', 'cdn', 'vpn'][i % 6]}${i >= 6 ? i : ''}.example.com`;
    const asset = { asset_value: host, url: `https://${host}/`, status_code: [200, 301, 403, 404][i % 4], title: i === 3 ? '<img src=x onerror="document.title=\'pwned\'">' : `Welcome to ${host}`, asset_type: i % 5 === 0 ? 'subdomain' : 'web', host_ip: `192.0.2.${i + 10}`, tech: techs[i % techs.length], source: 'httpx' };
    await d.api('POST', '/osm/api/functions/eval', { script: `db_insert_asset("example.com", ${JSON.stringify(JSON.stringify(asset))})` });
  }
  const sevs = ['critical', 'high', 'high', 'medium', 'medium', 'medium', 'low', 'info'];
  for (const [i, severity] of sevs.entries()) {
    await d.api('POST', '/osm/api/vulnerabilities', {
      workspace: 'example.com',
      vuln_info: `CVE-2026-${1000 + i}`,
      vuln_title: ['Exposed .git folder', 'SQL injection in /search', 'Open redirect', 'Missing HSTS', 'Directory listing', 'Verbose server banner', 'Cookie without Secure', 'TLS 1.0 enabled'][i],
      severity,
      asset_value: `https://www.example.com/${['.git/config', 'search?q=1', 'go?url=', '', 'static/', '', 'login', ''][i]}`,
      vuln_desc: 'Found by the sample scanner.',
      detail_http_request: 'GET /.git/config HTTP/1.1\nHost: www.example.com\n',
      detail_http_response: 'HTTP/1.1 200 OK\nContent-Type: text/plain\n\n[core]\n\trepositoryformatversion = 0\n',
      tags: ['sample'],
    });
  }
  await d.api('POST', '/osm/api/schedules', { name: 'nightly recon', workflow_name: 'sample-recon', target: 'example.com', trigger_type: 'cron', schedule: '0 3 * * *', enabled: true });
  return { runs };
}
