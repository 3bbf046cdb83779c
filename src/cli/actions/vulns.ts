/** `osm vulns`: parse flags, call the vulnerability service, print a table and a summary line, or JSON. */
import type { Command } from 'commander';
import { commandOrg, openApp } from '../app.js';
import { listVulns, parseSeverityList, vulnSummary } from '../../services/vulns.js';
import { optionsOf } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';
import { intFlag } from './assets.js';

interface VulnsOptions {
  workspace?: string;
  severity?: string;
  limit?: string;
}

/** `osm vulns [-w ws] [--severity a,b] [--limit n] [--json]`. */
export async function vulnsList(command: Command): Promise<void> {
  const o = optionsOf<VulnsOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const severity = parseSeverityList(o.severity);
  const limit = intFlag(o.limit, '--limit', 50);
  const app = await openApp(o);
  try {
    // The global --org: only findings of that org's workspaces.
    const org = await commandOrg(app, o);
    const r = await listVulns(app, { workspace: o.workspace, severity, org_uuid: org }, { offset: 0, limit });
    const summary = await vulnSummary(app, o.workspace, org);
    if (o.json) {
      ui.json({ data: r.data, total: r.total, summary });
      return;
    }
    const color = colorEnabled(o.disableColor);
    const paint: Record<string, (s: string) => string> = {
      critical: ui.chalk.magenta, high: ui.chalk.red, medium: ui.chalk.yellow, low: ui.chalk.blue, info: ui.chalk.gray,
    };
    if (r.data.length > 0) {
      const rows = r.data.map((v) => [v.id, (paint[v.severity] ?? String)(v.severity), v.vuln_info, v.vuln_title.slice(0, 40), v.asset_value.slice(0, 50), v.workspace]);
      ui.out(await renderTable(['ID', 'Severity', 'Vulnerability', 'Title', 'Asset', 'Workspace'], rows, { color }));
    } else {
      ui.info('No vulnerabilities found');
    }
    const b = summary.by_severity;
    ui.out(
      `${summary.workspace ? `${summary.workspace}: ` : ''}critical ${b.critical} · high ${b.high} · medium ${b.medium} · low ${b.low} · info ${b.info} — total ${summary.total}` +
        (r.total !== summary.total || r.data.length < r.total ? ` (showing ${r.data.length} of ${r.total} matching)` : ''),
    );
  } finally {
    await app.close();
  }
}
