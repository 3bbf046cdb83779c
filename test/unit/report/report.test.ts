/** Workspace reports: sections, escaping of hostile tool output, no network references, changes window. */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/index.js';
import { renderReport, reportData, reportFormat } from '../../../src/report/index.js';
import { evaluate } from '../../../src/engine/js-runtime.js';
import { importToolFileSync, toolImporter } from '../../../src/ingest/index.js';
import { ROOT } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import fs from 'node:fs';

const fx = (name: string) => path.join(ROOT, 'test/fixtures/tools', name);
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function store(): Store {
  const s = openStore(':memory:');
  cleanups.push(() => s.close());
  return s;
}
const XSS = '<script>alert(1)</script><img src=x onerror=alert(2)>';

/** A workspace with real tool output plus hostile values in every kind of field. */
function seeded(): Store {
  const s = store();
  importToolFileSync(s, 'ws', toolImporter('nmap')!, fx('nmap.xml'));
  importToolFileSync(s, 'ws', toolImporter('sslscan')!, fx('sslscan.xml'));
  s.assets.upsertMany('ws', [{ asset_value: 'evil.example.com', url: `https://evil.example.com/"><script>x()</script>`, title: XSS, tech: [XSS], asset_type: 'http', status_code: 200 }]);
  s.vulns.upsertMany('ws', [{ vuln_info: 'xss-probe', vuln_title: XSS, vuln_desc: `desc ${XSS}`, vuln_poc: `poc ${XSS}`, severity: 'critical', asset_value: 'evil.example.com', tags: [XSS] }]);
  return s;
}

describe('HTML report', () => {
  it('escapes every value: no tag, attribute or script from tool output survives', () => {
    const html = renderReport(seeded(), 'ws', 'html');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/<[^>]*onerror/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(html).toContain('&quot;&gt;&lt;script&gt;x()&lt;/script&gt;');
  });

  it('is self-contained: a CSP that forbids loading anything, no external URL in any src/href/url()', () => {
    const html = renderReport(seeded(), 'ws', 'html');
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`);
    expect(html).not.toMatch(/<[^>]*\b(src|href)\s*=/i);
    expect(html).not.toMatch(/url\(|@import|<link\b/i);
  });

  it('holds the summary, assets by type, findings by severity with evidence, and the changes', () => {
    const html = renderReport(seeded(), 'ws', 'html', { since: '2000-01-01T00:00:00Z' });
    expect(html).toContain('<h1>Recon report: ws</h1>');
    for (const section of ['Summary', 'Changes since the previous run', 'Findings by severity', 'Assets by type']) expect(html).toContain(`<h2>${section}</h2>`);
    expect(html).toContain('<h3>port (4)</h3>');
    expect(html).toContain('<h3>ip (1)</h3>');
    expect(html).toContain('<b>Certificate expired</b>');
    expect(html).toContain('<pre>subject osm-test.local, valid from Jan  1 00:00:00 2020 GMT to Feb  1 00:00:00 2020 GMT</pre>');
    expect(html).toMatch(/assets <span class="added">\+6<\/span>/);
  });
});

describe('report data and other formats', () => {
  it('counts are exact; findings are grouped by severity; the change window defaults to the newest run', () => {
    const s = seeded();
    const d = reportData(s, 'ws', { since: '2000-01-01T00:00:00Z' });
    expect(d.summary).toEqual({ assets: 6, assets_by_type: { http: 1, ip: 1, port: 4 }, findings: 5, findings_by_severity: { critical: 1, high: 1, medium: 2, low: 1, info: 0 } });
    expect(d.findings_by_severity.find((g) => g.severity === 'medium')!.items.map((f) => f.vuln_info)).toEqual(['sslscan-cert-self-signed', 'sslscan-tls10-enabled']);
    expect(d.changes.assets.summary.total_added).toBe(6);
    // No run yet: the window starts with the workspace, so everything is new.
    expect(reportData(s, 'ws').changes.findings.summary.total_added).toBe(5);
  });

  it('a later window lists only what changed since; rows not seen since are "removed"', async () => {
    const s = seeded();
    await new Promise((r) => setTimeout(r, 5));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    importToolFileSync(s, 'ws', toolImporter('sslscan')!, fx('sslscan.xml'));
    const d = reportData(s, 'ws', { since });
    expect(d.changes.findings.summary).toEqual({ total_added: 0, total_removed: 1, total_changed: 0 });
    expect(d.changes.findings.removed.map((v) => v.vuln_info)).toEqual(['xss-probe']);
    expect(d.changes.assets.removed.map((a) => a.asset_value).sort()).toEqual(['127.0.0.1', '127.0.0.1:5432', '127.0.0.1:6379', '127.0.0.1:46515', 'evil.example.com'].sort());
  });

  it('Markdown escapes HTML and table breaks; JSON is the data', () => {
    const s = seeded();
    const md = renderReport(s, 'ws', 'md');
    expect(md).not.toContain('<script');
    expect(md).toContain('&lt;script&gt;alert\\(1\\)&lt;/script&gt;');
    expect(md).toContain('## Findings by severity');
    const json = JSON.parse(renderReport(s, 'ws', 'json'));
    expect(json.summary.findings).toBe(5);
    expect(reportFormat('markdown')).toBe('md');
    expect(() => reportFormat('pdf')).toThrow("unknown report format 'pdf': use html, md or json");
  });

  it('generate_workspace_report writes the file from a workflow step', () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const s = seeded();
    const out = path.join(t.dir, 'r', 'report.html');
    const logs: string[] = [];
    const ev = (script: string) => evaluate(script, {}, { ctx: { store: s, log: (l) => logs.push(l) } }).value;
    expect(ev(`generate_workspace_report('ws', 'html', ${JSON.stringify(out)})`)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toContain('<h1>Recon report: ws</h1>');
    expect(ev(`generate_workspace_report('ws', 'pdf', ${JSON.stringify(out)})`)).toBe(false);
    expect(logs).toEqual(["[WARN] generate_workspace_report: unknown report format 'pdf': use html, md or json"]);
  });
});
