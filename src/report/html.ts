/**
 * The report as one self-contained HTML file: inline CSS, no script, no font, no image and no
 * link that loads anything (a Content-Security-Policy of `default-src 'none'` says so to the
 * browser too). Every value comes from tool output and is untrusted: each one goes through `esc`
 * exactly once, at the point it is written into the page.
 */
import type { ReportAsset, ReportData, ReportFinding } from './data.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escapes any value (text and attribute safe). */
export function esc(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid #d5d9e0;padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}.muted{color:#667085}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}.card{background:#fff;border:1px solid #d5d9e0;border-radius:6px;padding:10px 14px;min-width:110px}
.card b{display:block;font-size:22px}
table{border-collapse:collapse;width:100%;background:#fff;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #d5d9e0;padding:5px 7px;text-align:left;vertical-align:top;word-break:break-word}th{background:#eef0f4}
.sev{display:inline-block;border-radius:4px;padding:1px 7px;color:#fff;font-weight:600;font-size:12px}
.critical{background:#7a1fa2}.high{background:#c62828}.medium{background:#ef6c00}.low{background:#2e7d32}.info{background:#546e7a}
.finding{background:#fff;border:1px solid #d5d9e0;border-radius:6px;padding:10px 14px;margin:8px 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f0f2f5;padding:6px 8px;border-radius:4px;margin:6px 0}
.added{color:#2e7d32}.removed{color:#c62828}.changed{color:#ef6c00}
`;

function table(head: string[], rows: unknown[][]): string {
  if (rows.length === 0) return '<p class="muted">None.</p>';
  const th = head.map((h) => `<th>${esc(h)}</th>`).join('');
  const tr = rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${tr}\n</tbody></table>`;
}

function more(total: number, shown: number): string {
  return total > shown ? `<p class="muted">${esc(total - shown)} more not listed (${esc(total)} in total).</p>` : '';
}

function assetRow(a: ReportAsset): unknown[] {
  return [a.asset_value, a.url, a.status_code || '', a.title, [...a.open_ports, a.remarks].filter(Boolean).join(' '), a.tech.join(', '), a.host_ip, a.source, a.last_seen_at];
}

function findingBlock(f: ReportFinding): string {
  const title = f.vuln_title || f.vuln_info;
  return `<div class="finding"><span class="sev ${esc(f.severity)}">${esc(f.severity)}</span> <b>${esc(title)}</b> <span class="muted">${esc(f.vuln_info)}</span>
<div>Asset: <code>${esc(f.asset_value)}</code>${f.matcher_name ? ` · matcher <code>${esc(f.matcher_name)}</code>` : ''} · confidence ${esc(f.confidence)} · first seen ${esc(f.created_at)} · last seen ${esc(f.last_seen_at)}</div>
${f.vuln_desc ? `<div>${esc(f.vuln_desc)}</div>` : ''}${f.vuln_poc ? `<div>Evidence:</div><pre>${esc(f.vuln_poc)}</pre>` : ''}${f.tags.length ? `<div class="muted">Tags: ${esc(f.tags.join(', '))}</div>` : ''}</div>`;
}

/** The whole HTML document. */
export function renderHtml(d: ReportData): string {
  const s = d.summary;
  const cards = [
    `<div class="card"><b>${esc(s.assets)}</b>assets</div>`,
    `<div class="card"><b>${esc(s.findings)}</b>findings</div>`,
    ...Object.entries(s.findings_by_severity).map(([sev, n]) => `<div class="card"><b>${esc(n)}</b><span class="sev ${esc(sev)}">${esc(sev)}</span></div>`),
  ].join('');
  const c = d.changes;
  const changes = [
    `<p>Since ${esc(c.since)}: assets <span class="added">+${esc(c.assets.summary.total_added)}</span> <span class="removed">−${esc(c.assets.summary.total_removed)}</span> <span class="changed">~${esc(c.assets.summary.total_changed)}</span>; findings <span class="added">+${esc(c.findings.summary.total_added)}</span> <span class="removed">−${esc(c.findings.summary.total_removed)}</span> <span class="changed">~${esc(c.findings.summary.total_changed)}</span>.</p>`,
    '<h3>New assets</h3>', table(['Asset', 'URL', 'Type', 'Status'], c.assets.added.map((a) => [a.asset_value, a.url, a.asset_type, a.status_code || ''])), more(c.assets.summary.total_added, c.assets.added.length),
    '<h3>Assets not seen again</h3>', table(['Asset', 'URL', 'Type', 'Last seen'], c.assets.removed.map((a) => [a.asset_value, a.url, a.asset_type, a.last_seen_at])), more(c.assets.summary.total_removed, c.assets.removed.length),
    '<h3>Changed assets</h3>', table(['Asset', 'URL', 'Changes'], c.assets.changed.map((a) => [a.asset_value, a.url, a.changes.map((x) => `${x.field}: ${JSON.stringify(x.old_value)} → ${JSON.stringify(x.new_value)}`).join('; ')])), more(c.assets.summary.total_changed, c.assets.changed.length),
    '<h3>New findings</h3>', table(['Severity', 'Finding', 'Asset'], c.findings.added.map((v) => [v.severity, v.vuln_info, v.asset_value])), more(c.findings.summary.total_added, c.findings.added.length),
    '<h3>Findings not seen again</h3>', table(['Severity', 'Finding', 'Asset', 'Last seen'], c.findings.removed.map((v) => [v.severity, v.vuln_info, v.asset_value, v.last_seen_at])), more(c.findings.summary.total_removed, c.findings.removed.length),
    '<h3>Changed findings</h3>', table(['Finding', 'Asset', 'Changes'], c.findings.changed.map((v) => [v.vuln_info, v.asset_value, v.changes.map((x) => `${x.field}: ${JSON.stringify(x.old_value)} → ${JSON.stringify(x.new_value)}`).join('; ')])), more(c.findings.summary.total_changed, c.findings.changed.length),
  ].join('\n');
  const findings = d.findings_by_severity
    .filter((g) => g.total > 0)
    .map((g) => `<h3><span class="sev ${esc(g.severity)}">${esc(g.severity)}</span> ${esc(g.total)}</h3>\n${g.items.map(findingBlock).join('\n')}${more(g.total, g.items.length)}`)
    .join('\n');
  const assets = d.assets_by_type
    .map((g) => `<h3>${esc(g.type)} (${esc(g.total)})</h3>\n${table(['Asset', 'URL', 'Status', 'Title', 'Ports / notes', 'Technologies', 'IP', 'Source', 'Last seen'], g.items.map(assetRow))}${more(g.total, g.items.length)}`)
    .join('\n');
  const run = d.last_run;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>osm report: ${esc(d.workspace)}</title>
<style>${CSS}</style></head>
<body><main>
<h1>Recon report: ${esc(d.workspace)}</h1>
<p class="muted">Generated ${esc(d.generated_at)}${run ? ` · last run ${esc(run.workflow_name)} on ${esc(run.target)} (${esc(run.status)}, started ${esc(run.started_at ?? '')})` : ''}</p>
<h2>Summary</h2>
<div class="cards">${cards}</div>
${table(['Asset type', 'Count'], Object.entries(s.assets_by_type))}
<h2>Changes since the previous run</h2>
${changes}
<h2>Findings by severity</h2>
${findings || '<p class="muted">No findings.</p>'}
<h2>Assets by type</h2>
${assets || '<p class="muted">No assets.</p>'}
</main></body></html>
`;
}
