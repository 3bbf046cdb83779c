import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStore, type Store } from '../../../src/store/index.js';
import { importAssetsJsonl, importCustomAssetsJsonl, importVulnsJsonl, runSync, httpxKind, nucleiKind } from '../../../src/ingest/index.js';

const fixtures = fileURLToPath(new URL('../../fixtures/data/', import.meta.url));
const fx = (name: string) => path.join(fixtures, name);
const cleanups: (() => void)[] = [];
afterEach(() => {
  vi.useRealTimers();
  while (cleanups.length) cleanups.pop()!();
});

function store(): Store {
  const s = openStore(':memory:');
  cleanups.push(() => s.close());
  return s;
}
function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
const all = { offset: 0, limit: 1000 };
const byValue = (s: Store, ws: string, value: string) => s.assets.list({ workspace: ws }, all).data.find((a) => a.asset_value === value)!;
const count = (s: Store, table: string, where = '1=1') => (s.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get() as { n: number }).n;

describe('httpx import', () => {
  it('maps the real httpx fields', async () => {
    const s = store();
    const stats = await importAssetsJsonl(s, 'example.com', fx('httpx-run1.jsonl'));
    expect(stats).toEqual({ new: 5, updated: 0, unchanged: 0, errors: 0, skipped: 0, total: 5, out_of_scope: 0, error_lines: [] });
    const www = byValue(s, 'example.com', 'www.example.com');
    expect(www).toMatchObject({
      url: 'https://www.example.com', input: 'www.example.com', scheme: 'https', method: 'GET', path: '/', status_code: 200,
      content_type: 'text/html', content_length: 1256, title: 'Example Domain', words: 298, lines: 47, host_ip: '93.184.215.14',
      a: ['93.184.215.14'], tech: ['Nginx', 'HSTS'], time: '112.3ms', remarks: 'nginx', source: 'web', asset_type: 'http', is_cdn: false,
    });
    expect(JSON.parse(www.tls)).toMatchObject({ tls_version: 'tls13', subject_cn: 'www.example.com' });
    expect(JSON.parse(www.raw_json_data)).toMatchObject({ url: 'https://www.example.com', port: '443' });
    expect(byValue(s, 'example.com', 'cdn.example.com')).toMatchObject({ is_cdn: true, is_cloud: true, is_waf: false, remarks: 'CloudFront,cloudfront' });
    expect(s.workspaces.get('example.com')).toMatchObject({ total_assets: 5 });
  });

  it('re-importing the same file adds nothing and counters stay exact', async () => {
    const s = store();
    await importAssetsJsonl(s, 'ws', fx('httpx-run1.jsonl'));
    const again = await importAssetsJsonl(s, 'ws', fx('httpx-run1.jsonl'));
    expect(again).toMatchObject({ new: 0, updated: 0, unchanged: 5, errors: 0, total: 5 });
    expect(count(s, 'assets')).toBe(5);
    expect(s.workspaces.get('ws')!.total_assets).toBe(count(s, 'assets', `workspace = 'ws'`));
    expect(count(s, 'event_logs', `topic = 'asset.discovered'`)).toBe(5);
    expect(count(s, 'event_logs', `topic = 'asset.updated'`)).toBe(0);
    expect(count(s, 'event_logs', `topic = 'asset.import'`)).toBe(2);
  });

  it('records asset.updated events for assets a later scan changed', async () => {
    const s = store();
    await importAssetsJsonl(s, 'ws', fx('httpx-run1.jsonl'));
    const second = await importAssetsJsonl(s, 'ws', fx('httpx-run2.jsonl'));
    expect(second).toMatchObject({ new: 1, updated: 1, unchanged: 3, total: 5 });
    const updated = s.events.list({ topic: 'asset.updated' }, all).data;
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ name: 'api.example.com', workspace: 'ws', data_type: 'asset' });
    expect(JSON.parse(updated[0]!.data)).toEqual({ url: 'https://api.example.com', status_code: 200, title: 'API v2', tech: ['Express', 'Node.js'] });
    expect(s.assets.oldestCreatedAt('ws')).toBe(byValue(s, 'ws', 'www.example.com').created_at);
    expect(s.assets.oldestCreatedAt('none')).toBeUndefined();
  });

  it('counts and reports broken lines without aborting the file', async () => {
    const s = store();
    const stats = await importAssetsJsonl(s, 'ws', fx('httpx-broken.jsonl'));
    expect(stats).toMatchObject({ new: 3, errors: 4, total: 7 });
    expect(stats.error_lines.map((e) => e.line)).toEqual([2, 4, 5, 6]);
    expect(stats.error_lines[0]!.message).toMatch(/^invalid JSON: /);
    expect(stats.error_lines[2]!.message).toBe('not a JSON object');
    expect(stats.error_lines[3]!.message).toBe('host: required (or url or input)');
    // The CRLF line and the last line (no trailing newline) were imported.
    expect(byValue(s, 'ws', 'api.example.com').status_code).toBe(401);
    expect(byValue(s, 'ws', 'old.example.com')).toBeDefined();
    const ev = s.events.list({ topic: 'ingest.errors' }, all).data;
    expect(ev).toHaveLength(1);
    expect(JSON.parse(ev[0]!.data)).toMatchObject({ errors: 4, file: fx('httpx-broken.jsonl') });
  });

  it('rejects over-long lines by number and keeps going', async () => {
    const dir = tmp();
    const file = path.join(dir, 'long.jsonl');
    fs.writeFileSync(file, `${JSON.stringify({ host: 'a.com', title: 'x'.repeat(5000) })}\n${JSON.stringify({ host: 'b.com' })}\n`);
    const stats = await importAssetsJsonl(store(), 'ws', file, { maxLineBytes: 1024 });
    expect(stats).toMatchObject({ new: 1, errors: 1, error_lines: [{ line: 1, message: 'line too long' }] });
  });

  it('writes individual events up to the cap per batch and says how many were left out', async () => {
    const s = store();
    const stats = await importAssetsJsonl(s, 'ws', fx('httpx-run1.jsonl'), { batchSize: 2, eventsPerBatch: 1, runUuid: 'run-1', workflowName: 'recon' });
    expect(stats.new).toBe(5);
    const discovered = s.events.list({ topic: 'asset.discovered' }, all).data;
    expect(discovered).toHaveLength(3); // three batches (2 + 2 + 1), one event each
    expect(discovered[0]).toMatchObject({ source: 'executor', data_type: 'asset', workspace: 'ws', run_id: 'run-1', workflow_name: 'recon' });
    expect(Object.keys(JSON.parse(discovered[0]!.data)).sort()).toEqual(['status_code', 'tech', 'title', 'url']);
    const summary = JSON.parse(s.events.list({ topic: 'asset.import' }, all).data[0]!.data);
    expect(summary).toMatchObject({ new: 5, total: 5, events_written: 3, events_omitted: 2 });
  });

  it('with the default batches, individual events stay at 100 per 10,000 rows whatever the batch size', async () => {
    const s = store();
    const file = path.join(tmp(), 'many.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 25_000; i++) lines.push(JSON.stringify({ input: `h${i}.example.com`, url: `https://h${i}.example.com`, status_code: 200 }));
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const stats = await importAssetsJsonl(s, 'ws', file);
    expect(stats.new).toBe(25_000);
    // 25,000 rows → budgets at 0, 10,000 and 20,000 rows: 300 events, the rest counted as left out
    expect(count(s, 'event_logs', "topic = 'asset.discovered'")).toBe(300);
    expect(JSON.parse(s.events.list({ topic: 'asset.import' }, all).data[0]!.data)).toMatchObject({ events_written: 300, events_omitted: 24_700 });
  });

  it('fails clearly on a missing file or workspace', async () => {
    await expect(importAssetsJsonl(store(), 'ws', '/nonexistent/file.jsonl')).rejects.toThrow('Import file not found: /nonexistent/file.jsonl');
    await expect(importAssetsJsonl(store(), '', fx('httpx-run1.jsonl'))).rejects.toThrow('Workspace is required');
  });

  it('the synchronous reader gives the same result', async () => {
    const a = store();
    const b = store();
    const asyncStats = await importAssetsJsonl(a, 'ws', fx('httpx-broken.jsonl'));
    const syncStats = runSync(b, 'ws', fx('httpx-broken.jsonl'), httpxKind());
    expect(syncStats).toEqual(asyncStats);
    const rows = (s: Store) => s.assets.list({}, all).data.map(({ id: _i, created_at: _c, updated_at: _u, last_seen_at: _l, ...rest }) => rest);
    expect(rows(b)).toEqual(rows(a));
  });
});

describe('nuclei import', () => {
  it('maps findings, dedupes by fingerprint and keeps severity counters exact', async () => {
    const s = store();
    const stats = await importVulnsJsonl(s, 'example.com', fx('nuclei.jsonl'));
    expect(stats).toMatchObject({ new: 6, updated: 0, errors: 0, total: 6 });
    const v = s.vulns.list({ severity: ['critical'] }, all).data[0]!;
    expect(v).toMatchObject({
      vuln_info: 'CVE-2021-41773', template_id: 'CVE-2021-41773', vuln_title: 'Apache 2.4.49 - Path Traversal', severity: 'critical',
      vuln_desc: 'Path traversal in Apache HTTP Server 2.4.49.', asset_value: 'old.example.com', asset_type: 'http', confidence: 'Firm',
      vuln_poc: 'https://old.example.com/cgi-bin/.%2e/.%2e/etc/passwd', tags: ['cve', 'cve2021', 'apache', 'lfi'],
    });
    expect(v.detail_http_request).toContain('Host: old.example.com');
    expect(JSON.parse(v.raw_vuln_json)['template-id']).toBe('CVE-2021-41773');
    expect(s.vulns.list({ asset_value: 'admin' }, all).data[0]!.tags).toEqual(['panel', 'exposure']);
    expect(s.vulns.list({ severity: ['info'] }, all).data.map((x) => x.matcher_name).sort()).toEqual(['hsts', 'nginx']);
    const again = runSync(s, 'example.com', fx('nuclei.jsonl'), nucleiKind);
    expect(again).toMatchObject({ new: 0, updated: 0, unchanged: 6 });
    expect(s.workspaces.get('example.com')).toMatchObject({ total_vulns: 6, vuln_critical: 1, vuln_high: 1, vuln_medium: 1, vuln_low: 1, vuln_info: 2 });
    expect(count(s, 'event_logs', `topic = 'vuln.import'`)).toBe(2);
  });
});

describe('generic asset import', () => {
  it('unwraps http_record envelopes, skips other record types and reports bad records', async () => {
    const s = store();
    const stats = await importCustomAssetsJsonl(s, 'ws', fx('custom-assets.jsonl'));
    expect(stats).toMatchObject({ new: 2, skipped: 1, errors: 1, total: 4, error_lines: [{ line: 4, message: 'asset_value: required' }] });
    expect(byValue(s, 'ws', 'www.example.com')).toMatchObject({ source: 'custom', status_code: 200 });
    expect(byValue(s, 'ws', 'repo.example.com')).toMatchObject({ asset_type: 'subdomain', tech: ['GitLab'], remarks: 'internal' });
    const typed = store();
    await importCustomAssetsJsonl(typed, 'ws', fx('custom-assets.jsonl'), { assetType: 'web', source: 'import' });
    expect(typed.assets.list({}, all).data.every((a) => a.asset_type === 'web' && a.source === 'import')).toBe(true);
  });
});
