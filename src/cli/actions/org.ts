/** `osm org list|create|show|rename|assign|delete`: parse, call the orgs service, print a table or JSON. */
import type { Command } from 'commander';
import { errors } from '../../errors.js';
import { activeOrgFile, commandOrg, openApp, setActiveOrg } from '../app.js';
import type { AppContext } from '../../services/context.js';
import { assignWorkspaces, createOrg, deleteOrg, getOrgStats, listOrgs, requireOrg, updateOrg } from '../../services/orgs.js';
import type { OrgRowCounts } from '../../store/index.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';

/** Runs `fn` with an app context that is closed afterwards. */
async function withApp(command: Command, fn: (app: AppContext, o: GlobalOptions, ui: ReturnType<typeof createUi>) => Promise<void> | void): Promise<void> {
  const o = optionsOf(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await openApp(o);
  try {
    await fn(app, o, ui);
  } finally {
    await app.close();
  }
}

function rowCounts(c: OrgRowCounts): string {
  return `${c.workspaces} workspace(s), ${c.assets} asset(s), ${c.vulnerabilities} vulnerability(ies), ${c.runs} run(s)`;
}

/** `osm org list [--json]`. */
export async function orgList(command: Command): Promise<void> {
  await withApp(command, async (app, o, ui) => {
    const r = await listOrgs(app);
    if (o.json) {
      ui.json(r);
      return;
    }
    const rows = r.data.map((org) => [
      org.name + (org.is_default ? ' (default)' : ''),
      org.uuid,
      org.stats.total_workspaces,
      org.stats.total_assets,
      org.stats.total_vulns,
      org.stats.total_runs,
      org.tags.join(', '),
      org.description,
    ]);
    ui.out(await renderTable(['Name', 'UUID', 'Workspaces', 'Assets', 'Vulns', 'Runs', 'Tags', 'Description'], rows, { color: colorEnabled(o.disableColor) }));
    ui.out(`${r.total} org(s)`);
  });
}

/** `osm org create <name> [-d text] [--tags a,b] [--uuid u] [--json]`. */
export async function orgCreate(command: Command, name: string): Promise<void> {
  const own = optionsOf<{ description?: string; tags?: string; uuid?: string }>(command);
  await withApp(command, async (app, o, ui) => {
    const tags = own.tags === undefined ? undefined : own.tags.split(',').map((t) => t.trim()).filter(Boolean);
    const org = await createOrg(app, { name, description: own.description, tags, uuid: own.uuid });
    if (o.json) {
      ui.json({ data: org });
      return;
    }
    ui.success(`Created org ${org.name} (${org.uuid})`);
  });
}

/** `osm org show <org> [--json]`. */
export async function orgShow(command: Command, ref: string): Promise<void> {
  await withApp(command, async (app, o, ui) => {
    const org = await requireOrg(app, ref);
    const stats = await getOrgStats(app, org.uuid);
    if (o.json) {
      ui.json({ data: { ...org, stats } });
      return;
    }
    const color = colorEnabled(o.disableColor);
    const fields: [string, string | number][] = [
      ['Name', org.name + (org.is_default ? ' (default)' : '')],
      ['UUID', org.uuid],
      ['Description', org.description],
      ['Tags', org.tags.join(', ')],
      ['Workspaces', stats.total_workspaces],
      ['Assets', stats.total_assets],
      ['Vulnerabilities', stats.total_vulns],
      ['Runs', stats.total_runs],
      ['Created', org.created_at],
      ['Updated', org.updated_at],
    ];
    ui.out(await renderTable(['Field', 'Value'], fields, { color }));
    if (stats.workspaces.length > 0) ui.out(`Workspaces: ${stats.workspaces.join(', ')}`);
  });
}

/** `osm org rename <org> <new-name> [--json]`. */
export async function orgRename(command: Command, ref: string, newName: string): Promise<void> {
  await withApp(command, async (app, o, ui) => {
    const before = await requireOrg(app, ref);
    const r = await updateOrg(app, before.uuid, { name: newName });
    if (o.json) {
      ui.json(r);
      return;
    }
    ui.success(r.data.name === before.name ? `Org ${before.name} unchanged` : `Renamed org ${before.name} → ${r.data.name}`);
  });
}

/** `osm org assign <org> <workspace...> [--json]`. */
export async function orgAssign(command: Command, ref: string, workspaces: string[]): Promise<void> {
  await withApp(command, async (app, o, ui) => {
    const r = await assignWorkspaces(app, ref, workspaces);
    if (o.json) {
      ui.json(r);
      return;
    }
    if (r.assigned) ui.success(`Moved into org ${r.data.name}: ${rowCounts(r.assigned)}`);
    if (r.unknown_workspaces && r.unknown_workspaces.length > 0) ui.warn(`No such workspace: ${r.unknown_workspaces.join(', ')}`);
  });
}

/** `osm org delete <org> [--purge] [--json]`. */
export async function orgDelete(command: Command, ref: string): Promise<void> {
  const own = optionsOf<{ purge?: boolean }>(command);
  await withApp(command, async (app, o, ui) => {
    const r = await deleteOrg(app, ref, Boolean(own.purge));
    if (o.json) {
      ui.json(r);
      return;
    }
    ui.success(r.purged ? `Deleted org ${r.name} and purged ${rowCounts(r.rows)}` : `Deleted org ${r.name}; moved ${rowCounts(r.rows)} to the default org`);
  });
}

/** `osm org use [org] [--clear]`: the org commands of this base folder work in by default. */
export async function orgUse(command: Command, ref: string | undefined): Promise<void> {
  const own = optionsOf<{ clear?: boolean }>(command);
  await withApp(command, async (app, o, ui) => {
    if (own.clear && ref !== undefined) throw errors.validation('give an org or --clear, not both');
    if (own.clear) {
      setActiveOrg(app, undefined);
      if (o.json) ui.json({ active_org: null });
      else ui.success('No active org: commands see every org');
      return;
    }
    if (ref === undefined) {
      const uuid = await commandOrg(app, { ...o, org: undefined });
      const org = uuid ? await requireOrg(app, uuid) : undefined;
      if (o.json) ui.json({ active_org: org ?? null, file: activeOrgFile(app) });
      else ui.out(org ? `Active org: ${org.name} (${org.uuid})` : 'No active org: commands see every org');
      return;
    }
    const org = await requireOrg(app, ref);
    setActiveOrg(app, org.uuid);
    if (o.json) ui.json({ active_org: org });
    else ui.success(`Active org: ${org.name} (${org.uuid}); assets, vulns, query and run now use it unless --org says otherwise`);
  });
}
