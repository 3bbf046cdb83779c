/** `osm import`: parse flags, call the import service, print the counts (or JSON). */
import type { Command } from 'commander';
import { openApp } from '../app.js';
import { optionsOf } from '../context.js';
import { createUi } from '../output.js';
import { importTool } from '../../services/imports.js';
import { scopeFileSpec } from '../../services/scope.js';

interface ImportOptions {
  workspace: string;
  source?: string;
  baseUrl?: string;
  scopeFile?: string;
}

/** Files from this size on get a progress indication on stderr. */
export const PROGRESS_MIN_BYTES = 4 * 1024 * 1024;

function mb(n: number): string {
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Progress on stderr: one rewritten line on a terminal, a line per quarter otherwise. */
function progressPrinter(silent: boolean) {
  const tty = Boolean(process.stderr.isTTY);
  let lastQuarter = 0;
  let shown = false;
  return {
    onProgress: (read: number, total: number) => {
      if (silent || total < PROGRESS_MIN_BYTES) return;
      const pct = Math.floor((read / total) * 100);
      if (tty) {
        process.stderr.write(`\r◆ importing: ${pct}% (${mb(read)} of ${mb(total)})`);
        shown = true;
        return;
      }
      const quarter = Math.floor(pct / 25);
      if (quarter > lastQuarter) {
        lastQuarter = quarter;
        process.stderr.write(`◆ importing: ${quarter * 25}% (${mb(read)} of ${mb(total)})\n`);
      }
    },
    done: () => {
      if (shown) process.stderr.write('\n');
    },
  };
}

/** `osm import <tool> <file> -w <workspace> [--source s] [--base-url u] [--json]`. */
export async function importAction(tool: string, file: string, command: Command): Promise<void> {
  const o = optionsOf<ImportOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const progress = progressPrinter(Boolean(o.silent));
  const app = await openApp(o);
  let stats;
  try {
    stats = await importTool(app, { tool, file, workspace: o.workspace, source: o.source, baseUrl: o.baseUrl, onProgress: progress.onProgress, ...(o.scopeFile ? { scope: scopeFileSpec(o.scopeFile) } : {}) });
  } finally {
    progress.done();
    await app.close();
  }
  const imported = stats.new + stats.updated + stats.unchanged;
  if (stats.read > 0 && imported === 0 && stats.errors > 0) process.exitCode = 1;
  if (o.json) {
    ui.json(stats);
    return;
  }
  ui.success(`${stats.tool}: ${file} → workspace ${stats.workspace}`);
  ui.out(
    `  read: ${stats.read}  inserted: ${stats.new}  updated: ${stats.updated}  unchanged: ${stats.unchanged}  skipped: ${stats.skipped}  invalid: ${stats.errors}`,
  );
  ui.out(`  assets: ${stats.assets.new} new, ${stats.assets.updated} updated, ${stats.assets.unchanged} unchanged; findings: ${stats.vulnerabilities.new} new, ${stats.vulnerabilities.updated} updated, ${stats.vulnerabilities.unchanged} unchanged`);
  if (stats.scope) ui.out(`  out of scope: ${stats.scope.dropped} row(s) dropped${stats.scope.samples.length ? ` (e.g. ${stats.scope.samples[0]!.value})` : ''}`);
  for (const e of stats.error_lines.slice(0, 10)) ui.warn(`record ${e.line}: ${e.message}`);
  if (stats.error_lines.length > 10) ui.warn(`… and ${stats.errors - 10} more invalid record(s) (--json lists the first ${stats.error_lines.length})`);
}
