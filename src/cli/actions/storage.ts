/** `osm storage ls|push|pull|pull-workspace|push-workspace`: parse, call the storage service, print. */
import type { Command } from 'commander';
import { openApp } from '../app.js';
import { optionsOf } from '../context.js';
import { colorEnabled, createUi, renderTable, type Ui } from '../output.js';
import { listStorage, pullPath, pullWorkspace, pushPath, pushWorkspace, type TransferOptions, type TransferResult, type WorkspaceSync } from '../../services/storage.js';
import { humanSize } from '../../storage/tree.js';
import type { SyncResult } from '../../storage/sync.js';

/** Files below this size show no progress. */
export const PROGRESS_MIN_BYTES = 4 * 1024 * 1024;

interface StorageOptions {
  recursive?: boolean;
}

/** A key as shown on a terminal: control characters escaped (keys come from the bucket). */
const shown = (s: string) => s.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** Per-file progress on stderr: one rewritten line on a terminal, a line per quarter otherwise; only for big files. */
function progressOf(silent: boolean): Pick<TransferOptions, 'onProgress'> & { done(): void } {
  const tty = Boolean(process.stderr.isTTY);
  let open = false;
  return {
    onProgress: (name) => {
      if (silent) return undefined;
      let lastQuarter = 0;
      return (done, total) => {
        if (total < PROGRESS_MIN_BYTES) return;
        const pct = Math.min(100, Math.floor((done / total) * 100));
        if (tty) {
          process.stderr.write(`\r◆ ${shown(name)}: ${pct}% (${humanSize(done)} of ${humanSize(total)})`);
          open = true;
          if (pct === 100) {
            process.stderr.write('\n');
            open = false;
          }
          return;
        }
        const quarter = Math.floor(pct / 25);
        if (quarter > lastQuarter) {
          lastQuarter = quarter;
          process.stderr.write(`◆ ${shown(name)}: ${quarter * 25}% (${humanSize(done)} of ${humanSize(total)})\n`);
        }
      };
    },
    done: () => {
      if (open) process.stderr.write('\n');
    },
  };
}

function syncJson(r: SyncResult) {
  return { uploaded: r.uploaded, downloaded: r.downloaded, skipped: r.skipped, errors: r.errors };
}

/** Prints a folder sync's summary and errors; a sync with errors exits 1. */
function reportSync(ui: Ui, verb: string, r: SyncResult, where: string): void {
  for (const e of r.errors) ui.error(`${shown(e.path)}: ${shown(e.error)}`);
  const moved = r.uploaded.length + r.downloaded.length;
  const line = `${verb} ${moved} file(s) ${where}; ${r.skipped.length} unchanged${r.errors.length ? `, ${r.errors.length} error(s)` : ''}`;
  if (r.errors.length) {
    ui.warn(line);
    process.exitCode = 1;
  } else ui.success(line);
}

/** `osm storage ls [prefix] [--recursive]`. */
export async function storageLs(command: Command, prefix: string | undefined): Promise<void> {
  const o = optionsOf<StorageOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await openApp(o);
  try {
    const r = await listStorage(app, prefix, Boolean(o.recursive));
    if (o.json) {
      ui.json(r);
      return;
    }
    if (r.folders.length + r.objects.length === 0) {
      ui.info(`Nothing under ${shown(r.prefix || 'the bucket')}`);
      return;
    }
    const rows = [...r.folders.map((f) => [shown(f), '-', '']), ...r.objects.map((x) => [shown(x.key), humanSize(x.size), x.lastModified])];
    ui.out(await renderTable(['Key', 'Size', 'Modified'], rows, { color: colorEnabled(o.disableColor) }));
    ui.out(`${r.folders.length} folder(s), ${r.objects.length} file(s), ${humanSize(r.objects.reduce((a, x) => a + x.size, 0))}`);
  } finally {
    await app.close();
  }
}

function printTransfer(ui: Ui, verb: string, r: TransferResult, json: boolean | undefined): void {
  if (json) {
    ui.json(r.kind === 'file' ? r : { kind: r.kind, prefix: r.prefix, path: r.path, ...syncJson(r) });
    if (r.kind === 'folder' && r.errors.length) process.exitCode = 1;
    return;
  }
  if (r.kind === 'file') ui.success(`${verb} ${r.path} ${verb === 'Pushed' ? '→' : '←'} ${shown(r.key)} (${humanSize(r.size)})`);
  else reportSync(ui, verb, r, `${verb === 'Pushed' ? `${r.path} → ${shown(r.prefix)}` : `${shown(r.prefix)} → ${r.path}`}`);
}

/** `osm storage push <local> [key] [--recursive]`. */
export async function storagePush(command: Command, local: string, key: string | undefined): Promise<void> {
  const o = optionsOf<StorageOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const progress = progressOf(Boolean(o.silent || o.json));
  const app = await openApp(o);
  try {
    const r = await pushPath(app, local, key, { recursive: o.recursive, onProgress: progress.onProgress });
    progress.done();
    printTransfer(ui, 'Pushed', r, o.json);
  } finally {
    progress.done();
    await app.close();
  }
}

/** `osm storage pull <key> [local] [--recursive]`. */
export async function storagePull(command: Command, key: string, local: string | undefined): Promise<void> {
  const o = optionsOf<StorageOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const progress = progressOf(Boolean(o.silent || o.json));
  const app = await openApp(o);
  try {
    const r = await pullPath(app, key, local, { recursive: o.recursive, onProgress: progress.onProgress });
    progress.done();
    printTransfer(ui, 'Pulled', r, o.json);
  } finally {
    progress.done();
    await app.close();
  }
}

function printWorkspace(ui: Ui, verb: string, r: WorkspaceSync, json: boolean | undefined): void {
  if (json) {
    ui.json({ workspace: r.workspace, prefix: r.prefix, local_path: r.local_path, ...(r.data_source ? { data_source: r.data_source } : {}), ...syncJson(r) });
    if (r.errors.length) process.exitCode = 1;
    return;
  }
  reportSync(ui, verb, r, verb === 'Pulled' ? `${shown(r.prefix)} → ${r.local_path}` : `${r.local_path} → ${shown(r.prefix)}`);
  if (r.data_source) ui.info(`Workspace ${r.workspace} is now data_source ${r.data_source}`);
}

/** `osm storage pull-workspace <name>`. */
export async function storagePullWorkspace(command: Command, name: string): Promise<void> {
  const o = optionsOf(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const progress = progressOf(Boolean(o.silent || o.json));
  const app = await openApp(o);
  try {
    printWorkspace(ui, 'Pulled', await pullWorkspace(app, name, { onProgress: progress.onProgress }), o.json);
  } finally {
    progress.done();
    await app.close();
  }
}

/** `osm storage push-workspace <name>`. */
export async function storagePushWorkspace(command: Command, name: string): Promise<void> {
  const o = optionsOf(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const progress = progressOf(Boolean(o.silent || o.json));
  const app = await openApp(o);
  try {
    printWorkspace(ui, 'Pushed', await pushWorkspace(app, name, { onProgress: progress.onProgress }), o.json);
  } finally {
    progress.done();
    await app.close();
  }
}
