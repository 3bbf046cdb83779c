/** `osm snapshot export|import|list`: parse, call the snapshots service, print. */
import type { Command } from 'commander';
import { openApp } from '../app.js';
import { exportSnapshot, importSnapshot, listSnapshots } from '../../services/snapshots.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';

function appOf(o: GlobalOptions) {
  return openApp(o);
}

/** 1536 → "1.5 KiB". */
export function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** `osm snapshot export <workspace> [-o file] [--no-artifacts]`. */
export async function snapshotExport(command: Command, workspace: string): Promise<void> {
  const o = optionsOf<{ output?: string; artifacts?: boolean }>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await appOf(o);
  try {
    const r = await exportSnapshot(app, { workspace, includeArtifacts: o.artifacts !== false, dest: o.output });
    if (o.json) {
      ui.json({ name: r.name, path: r.path, size: r.size, files: r.files, rows: r.rows });
      return;
    }
    const rows = Object.values(r.rows).reduce((a, b) => a + b, 0);
    ui.success(`Exported ${workspace} → ${r.path} (${humanBytes(r.size)}, ${r.files} files, ${rows} database rows)`);
  } finally {
    await app.close();
  }
}

/** `osm snapshot import <file|url> [--force] [--skip-db]`. */
export async function snapshotImport(command: Command, source: string): Promise<void> {
  const o = optionsOf<{ force?: boolean; skipDb?: boolean }>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await appOf(o);
  try {
    const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(source);
    const r = await importSnapshot(app, { ...(isUrl ? { url: source } : { file: { path: source } }), force: o.force, skipDb: o.skipDb, caller: 'cli' });
    if (o.json) {
      ui.json(r);
      return;
    }
    ui.success(`Imported workspace ${r.workspace} → ${r.local_path} (${r.files_count} files${r.rows ? `, ${Object.values(r.rows).reduce((a, b) => a + b, 0)} database rows` : ''})`);
    ui.warn(r.warning);
  } finally {
    await app.close();
  }
}

/** `osm snapshot list`. */
export async function snapshotList(command: Command): Promise<void> {
  const o = optionsOf(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await appOf(o);
  try {
    const r = await listSnapshots(app);
    if (o.json) {
      ui.json(r);
      return;
    }
    if (r.count === 0) {
      ui.info(`No snapshots in ${r.path}`);
      return;
    }
    ui.out(await renderTable(['Name', 'Size', 'Created'], r.data.map((s) => [s.name, humanBytes(s.size), s.created_at]), { color: colorEnabled(o.disableColor) }));
    ui.out(`${r.count} snapshot(s) in ${r.path}`);
  } finally {
    await app.close();
  }
}
