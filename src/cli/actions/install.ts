/** `osm install binary|workflow|list`: parse, call the registry service, print. */
import type { AppContext } from '../../services/context.js';
import type { Command } from 'commander';
import { openApp } from '../app.js';
import { directRegistryInfo, installBinaries, installWorkflow } from '../../services/registry.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';

function appOf(o: GlobalOptions) {
  return openApp(o);
}

interface BinaryOptions {
  name?: string[];
  all?: boolean;
  installOptional?: boolean;
  check?: boolean;
  registryUrl?: string;
  trustRegistry?: boolean;
  nixBuild?: boolean;
}

/** `osm install binary [-n name]... [--all] [--install-optional] [--check] [--registry-url u] [--trust-registry] [--nix-build]`. */
export async function installBinaryAction(command: Command): Promise<void> {
  const o = optionsOf<BinaryOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent || o.json });
  const app = await appOf(o);
  try {
    if (o.check) {
      await checkAction(app, o, ui);
      return;
    }
    const r = await installBinaries(app, {
      names: o.name ?? [],
      installAll: o.all,
      installOptional: o.installOptional,
      registryUrl: o.registryUrl,
      registryMode: o.nixBuild ? 'nix-build' : 'direct-fetch',
      trustRegistry: o.trustRegistry,
      caller: 'cli',
      onProgress: (ev) => {
        if (ev.phase === 'start') ui.info(`Installing ${ev.name}…`);
        else if (ev.outcome.ok) ui.success(`${ev.outcome.name} → ${ev.outcome.path || '(installed)'} (${ev.outcome.action})`);
        else ui.error(`${ev.outcome.name}: ${ev.outcome.error}`);
      },
    });
    if (o.json) ui.out(JSON.stringify(r, null, 2));
    else ui.info(`${r.installed_count} installed, ${r.failed_count} failed (binaries folder: ${r.binaries_folder})`);
    if (r.failed_count > 0) process.exitCode = 1;
  } finally {
    await app.close();
  }
}

async function checkAction(app: AppContext, o: GlobalOptions & BinaryOptions, ui: ReturnType<typeof createUi>): Promise<void> {
  const info = await directRegistryInfo(app, { registryUrl: o.registryUrl, caller: 'cli' });
  const wanted = o.name && o.name.length > 0 ? o.name : Object.keys(info.binaries);
  const rows = wanted.map((name) => {
    const b = info.binaries[name];
    return { name, known: Boolean(b), installed: Boolean(b?.installed), path: b?.path ?? '', version: typeof b?.version === 'string' ? b.version : '' };
  });
  if (o.json) {
    ui.out(JSON.stringify({ binaries_folder: app.settings().paths.binaries, binaries: rows }, null, 2));
  } else {
    const table = rows.map((r) => [r.name, r.version, r.known ? (r.installed ? 'yes' : 'no') : 'not in registry', r.path]);
    ui.out(await renderTable(['Name', 'Version', 'Installed', 'Path'], table, { color: colorEnabled(o.disableColor) }));
  }
  if (rows.some((r) => !r.installed)) process.exitCode = 1;
}

/** `osm install workflow <source>`. */
export async function installWorkflowAction(command: Command, source: string): Promise<void> {
  const o = optionsOf(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await appOf(o);
  try {
    if (!o.json) ui.info(`Installing workflows from ${source}…`);
    const r = await installWorkflow(app, { source, caller: 'cli' });
    if (o.json) {
      ui.out(JSON.stringify(r, null, 2));
      return;
    }
    ui.success(`Workflows installed → ${r.workflow_folder}`);
    if (r.backup) ui.info(`Previous workflows kept in ${r.backup}`);
    ui.info(`Index: ${r.indexed.added} added, ${r.indexed.updated} updated, ${r.indexed.removed} removed`);
  } finally {
    await app.close();
  }
}

/** `osm install list [--registry-url u]`: table of name, version, installed, path. */
export async function installListAction(command: Command): Promise<void> {
  const o = optionsOf<{ registryUrl?: string }>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await appOf(o);
  try {
    const info = await directRegistryInfo(app, { registryUrl: o.registryUrl, caller: 'cli' });
    if (o.json) {
      ui.out(JSON.stringify(info, null, 2));
      return;
    }
    const rows = Object.entries(info.binaries).map(([name, b]) => [name, typeof b.version === 'string' ? b.version : '', b.installed ? 'yes' : 'no', b.path]);
    ui.out(await renderTable(['Name', 'Version', 'Installed', 'Path'], rows, { color: colorEnabled(o.disableColor) }));
    const installed = Object.values(info.binaries).filter((b) => b.installed).length;
    ui.out(`${rows.length} binaries, ${installed} installed (registry: ${info.registry_url})`);
  } finally {
    await app.close();
  }
}
