/** `osm assets`: parse flags, call the assets service, print a table or JSON. */
import type { Command } from 'commander';
import { errors } from '../../errors.js';
import { commandOrg, openApp } from '../app.js';
import { listAssets } from '../../services/assets.js';
import { optionsOf } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';

interface AssetsOptions {
  workspace?: string;
  type?: string;
  status?: string;
  search?: string;
  limit?: string;
  stats?: boolean;
}

/** A positive integer flag value (capped), or a validation error naming the flag. */
export function intFlag(value: string | undefined, flag: string, def: number, cap = 10_000): number {
  if (value === undefined) return def;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw errors.validation(`${flag} must be a positive integer, got ${JSON.stringify(value)}`);
  return Math.min(cap, Number(value));
}

function short(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `osm assets [-w ws] [--type t] [--status n] [--search s] [--limit n] [--json]`. */
export async function assetsList(command: Command): Promise<void> {
  const o = optionsOf<AssetsOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const limit = intFlag(o.limit, '--limit', 50);
  const status = o.status === undefined ? undefined : intFlag(o.status, '--status', 0, 999);
  const app = await openApp(o);
  try {
    // The global --org: only assets of that org's workspaces.
    const org = await commandOrg(app, o);
    if (o.stats) {
      // Exact and cheap: the trigger-kept counter tables, never a scan of the assets table.
      const { byType, byStatus, total } = await app.repos.assetStats.totals({ workspace: o.workspace, org_uuid: org });
      if (o.json) {
        ui.json({ workspace: o.workspace ?? '', total, by_type: Object.fromEntries(byType.map((r) => [r.k || '(none)', r.n])), by_status: Object.fromEntries(byStatus.map((r) => [String(r.k), r.n])) });
        return;
      }
      const color = colorEnabled(o.disableColor);
      ui.out(await renderTable(['Asset type', 'Count'], byType.map((r) => [r.k || '(none)', r.n]), { color }));
      ui.out(await renderTable(['Status', 'Count'], byStatus.map((r) => [r.k || '(none)', r.n]), { color }));
      ui.out(`Total: ${total} assets${o.workspace ? ` in ${o.workspace}` : ''}`);
      return;
    }
    const r = await listAssets(app, { workspace: o.workspace, asset_type: o.type, status_code: status, search: o.search, org_uuid: org }, { offset: 0, limit });
    if (o.json) {
      ui.json({ data: r.data, total: r.total });
      return;
    }
    if (r.data.length === 0) {
      ui.info('No assets found');
      return;
    }
    const rows = r.data.map((a) => [a.id, a.workspace, short(a.asset_value, 40), a.status_code || '', short(a.title, 30), a.asset_type, short(a.tech.join(', '), 30)]);
    ui.out(await renderTable(['ID', 'Workspace', 'Asset', 'Status', 'Title', 'Type', 'Tech'], rows, { color: colorEnabled(o.disableColor) }));
    ui.out(`Showing ${r.data.length} of ${r.total} assets`);
  } finally {
    await app.close();
  }
}
