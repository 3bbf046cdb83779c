/** The report as Markdown: the same sections as the HTML report, with every value escaped for a table cell or a line. */
import type { ReportData } from './data.js';

/** Escapes a value for Markdown text: no HTML, no table breaks, no line breaks, no emphasis or links. */
export function mdText(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_{}[\]()#+!|~])/g, '\\$1')
    .replace(/\r?\n/g, ' ');
}

function table(head: string[], rows: unknown[][]): string {
  if (rows.length === 0) return '_None._\n';
  return `| ${head.join(' | ')} |\n| ${head.map(() => '---').join(' | ')} |\n${rows.map((r) => `| ${r.map(mdText).join(' | ')} |`).join('\n')}\n`;
}

function more(total: number, shown: number): string {
  return total > shown ? `\n_${total - shown} more not listed (${total} in total)._\n` : '';
}

/** The whole Markdown document. */
export function renderMarkdown(d: ReportData): string {
  const s = d.summary;
  const c = d.changes;
  const out: string[] = [`# Recon report: ${mdText(d.workspace)}`, '', `Generated ${mdText(d.generated_at)}${d.last_run ? `; last run ${mdText(d.last_run.workflow_name)} on ${mdText(d.last_run.target)} (${mdText(d.last_run.status)})` : ''}.`, ''];
  out.push('## Summary', '', `- Assets: ${s.assets}`, `- Findings: ${s.findings} (${Object.entries(s.findings_by_severity).map(([k, n]) => `${k} ${n}`).join(', ')})`, '');
  out.push(table(['Asset type', 'Count'], Object.entries(s.assets_by_type)));
  out.push('## Changes since the previous run', '', `Since ${mdText(c.since)}: assets +${c.assets.summary.total_added} −${c.assets.summary.total_removed} ~${c.assets.summary.total_changed}; findings +${c.findings.summary.total_added} −${c.findings.summary.total_removed} ~${c.findings.summary.total_changed}.`, '');
  out.push('### New assets', '', table(['Asset', 'URL', 'Type', 'Status'], c.assets.added.map((a) => [a.asset_value, a.url, a.asset_type, a.status_code || ''])), more(c.assets.summary.total_added, c.assets.added.length));
  out.push('### Assets not seen again', '', table(['Asset', 'URL', 'Type', 'Last seen'], c.assets.removed.map((a) => [a.asset_value, a.url, a.asset_type, a.last_seen_at])), more(c.assets.summary.total_removed, c.assets.removed.length));
  out.push('### New findings', '', table(['Severity', 'Finding', 'Asset'], c.findings.added.map((v) => [v.severity, v.vuln_info, v.asset_value])), more(c.findings.summary.total_added, c.findings.added.length));
  out.push('### Findings not seen again', '', table(['Severity', 'Finding', 'Asset'], c.findings.removed.map((v) => [v.severity, v.vuln_info, v.asset_value])), more(c.findings.summary.total_removed, c.findings.removed.length));
  out.push('## Findings by severity', '');
  if (s.findings === 0) out.push('_No findings._', '');
  for (const g of d.findings_by_severity.filter((x) => x.total > 0)) {
    out.push(`### ${g.severity} (${g.total})`, '');
    for (const f of g.items) {
      out.push(`- **${mdText(f.vuln_title || f.vuln_info)}** (\`${mdText(f.vuln_info)}\`) on ${mdText(f.asset_value)}${f.matcher_name ? ` [${mdText(f.matcher_name)}]` : ''}`);
      if (f.vuln_desc) out.push(`  - ${mdText(f.vuln_desc)}`);
      if (f.vuln_poc) out.push(`  - Evidence: ${mdText(f.vuln_poc)}`);
    }
    out.push(more(g.total, g.items.length), '');
  }
  out.push('## Assets by type', '');
  if (d.assets_by_type.length === 0) out.push('_No assets._', '');
  for (const g of d.assets_by_type) {
    out.push(`### ${mdText(g.type)} (${g.total})`, '');
    out.push(table(['Asset', 'URL', 'Status', 'Title', 'Ports / notes', 'Technologies', 'Source'], g.items.map((a) => [a.asset_value, a.url, a.status_code || '', a.title, [...a.open_ports, a.remarks].filter(Boolean).join(' '), a.tech.join(', '), a.source])), more(g.total, g.items.length));
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}
