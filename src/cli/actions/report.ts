/** `osm report`: build the report through the service, print it or write it atomically to -o. */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errors } from '../../errors.js';
import type { Command } from 'commander';
import { withApp } from '../app.js';
import { optionsOf } from '../context.js';
import { createUi } from '../output.js';
import { workspaceReport } from '../../services/reports.js';
import { atomicWriteFile } from '../../util/fs-safe.js';

interface ReportOptions {
  workspace: string;
  format: string;
  output?: string;
  since?: string;
}

/** `osm report -w ws [--format f] [-o file] [--since t]`. */
export async function reportAction(command: Command): Promise<void> {
  const o = optionsOf<ReportOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  if (o.output && existsSync(o.output) && statSync(o.output).isDirectory()) {
    throw errors.validation(`-o ${o.output} is a folder: give the report's file name (e.g. ${join(o.output, `${o.workspace}.${o.format}`)})`);
  }
  const text = await withApp(o, (app) => workspaceReport(app, { workspace: o.workspace, format: o.format, since: o.since }));
  if (!o.output) {
    process.stdout.write(text);
    return;
  }
  const file = resolve(o.output);
  atomicWriteFile(file, text);
  ui.success(`report of ${o.workspace} written to ${file}`);
}
