import { Command } from 'commander';
import { VERSION, REFERENCE_VERSION } from '../version.js';
import { messageOf, isOsmError } from '../errors.js';
import { COMMAND_MODULES } from './commands/index.js';
import type { GlobalOptions } from './context.js';
import { usageExampleRequest, usageExamples } from './examples.js';
import { stopLogFile } from '../util/log-file.js';
import { readBuildInfo } from './build-info.js';

/** Builds the commander program. Command modules only declare flags; their actions import lazily. */
export function buildProgram(): Command {
  const program = new Command('osm');
  program
    .description('osm — security-automation workflow engine (Osmedeus-compatible)')
    .version(versionText(), '-V, --version', 'print the version')
    .option('-b, --base-folder <dir>', 'base folder (default ~/osmedeus-base, env OSM_BASE_FOLDER)')
    .option('--settings-file <file>', 'settings file (default <base>/osm-settings.yaml)')
    .option('-F, --workflow-folder <dir>', 'workflows folder (overrides settings)')
    .option('-v, --verbose', 'more detail (artifacts in summaries, lint info)')
    .option('--debug', 'debug logs (implies --verbose)')
    .option('-q, --silent', 'errors only; hide step output')
    .option('--json', 'machine-readable JSON output')
    .option('--disable-color', 'no ANSI colours (also when stdout is not a TTY or NO_COLOR is set)')
    .option('--disable-notification', 'do not send webhook notifications')
    .option('--disable-logging', 'do not print log lines')
    .option('--ci-output-format', 'JSON output for CI (implies --silent)')
    .option('--log-file <file>', 'also append everything printed to this file (no colours)')
    .option('--log-file-tmp', 'like --log-file, with a new file in the temp folder (its path is printed)')
    .option('-H, --usage-example', 'show usage examples for the command')
    .option('--full-usage-example', 'show usage examples for every command')
    .option('--spinner', 'show the spinner for long steps even in CI (needs a terminal)')
    .option('--disable-db', 'use a throw-away database: nothing is recorded')
    .option('--width <columns>', 'wrap tables to this many columns')
    .option('--force', 'confirm destructive commands (same as their own --force)')
    .option('--org <name>', 'organization (name or uuid) that listings and new runs belong to')
    .option('--skip-auto-setup', 'accepted for compatibility: osm never downloads a base folder by itself')
    .showSuggestionAfterError(true)
    .configureOutput({
      outputError: (str, write) => write(str),
    });
  for (const register of COMMAND_MODULES) register(program);
  program.hook('preAction', async (_root, action) => applyGlobalFlags(action.optsWithGlobals() as GlobalOptions));
  program
    .command('version')
    .description('print the version (same as --version); --json for scripts')
    .action((_opts, command: Command) => {
      const b = readBuildInfo();
      if (command.optsWithGlobals().json) {
        process.stdout.write(`${JSON.stringify({ name: 'osm', version: VERSION, build: b.built_at, commit: b.commit, author: AUTHOR, docs: DOCS, compatible_with: `osmedeus ${REFERENCE_VERSION}` })}\n`);
      } else process.stdout.write(`${versionText()}\n`);
    });
  return program;
}

const AUTHOR = 'the osm contributors';
const DOCS = "README.md and docs/ in the package; 'man osm' (man/osm.1)";

/** The reference's --version block (name line, Version, Build, Commit, Author, Docs) plus what osm is compatible with. */
function versionText(): string {
  const b = readBuildInfo();
  return [
    `osm - security-automation workflow engine`,
    `Version: ${VERSION}`,
    `Build: ${b.built_at}`,
    `Commit: ${b.commit}`,
    `Author: ${AUTHOR}`,
    `Docs: ${DOCS}`,
    `Compatible with: Osmedeus ${REFERENCE_VERSION} workflows and API`,
  ].join('\n');
}

/** CLI entry point: parses argv, runs the action, turns errors into `Error: <message>` + exit 1. */
export async function main(argv: string[]): Promise<void> {
  // `osm … | head` closes stdout early: that is not an error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  const program = buildProgram();
  program.exitOverride();
  const examples = usageExampleRequest(argv.slice(2), commandNames(program));
  if (examples) {
    process.stdout.write(usageExamples(examples.command, examples.full));
    return;
  }
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      // commander already printed help/version/usage errors.
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') {
        process.exitCode = 0;
      } else {
        process.exitCode = e.exitCode ?? 1;
      }
      return;
    }
    if (process.env.OSM_DEBUG_STACK && err instanceof Error && !isOsmError(err)) {
      process.stderr.write(`${err.stack}\n`);
    }
    process.stderr.write(`Error: ${messageOf(err)}\n`);
    process.exitCode = process.exitCode && process.exitCode !== 0 ? process.exitCode : 1;
  } finally {
    stopLogFile();
  }
}

/** Every command name and alias, for locating the command among argv words. */
function commandNames(program: Command): Set<string> {
  const names = new Set<string>();
  for (const c of program.commands) {
    names.add(c.name());
    for (const a of c.aliases()) names.add(a);
  }
  return names;
}

/** Global flags that act before any command runs: log files, table width, throw-away database. */
async function applyGlobalFlags(o: GlobalOptions): Promise<void> {
  if (o.logFile || o.logFileTmp) {
    const { startLogFile, tmpLogPath } = await import('../util/log-file.js');
    const path = startLogFile(o.logFile ?? tmpLogPath());
    if (!o.logFile) process.stderr.write(`◆ Logging to ${path}\n`);
  }
  if (o.width !== undefined) {
    const n = Number(o.width);
    if (!Number.isInteger(n) || n < 20 || n > 1000) throw new Error(`--width must be a whole number of columns between 20 and 1000, got '${o.width}'`);
    (await import('./output.js')).setTableWidth(n);
  }
  if (o.disableDb) {
    process.env.OSM_DISABLE_DB = '1';
    if (!o.json && !o.silent && !o.ciOutputFormat) process.stderr.write('⚠ --disable-db: this command uses a throw-away database; nothing it records is kept\n');
  }
  if (o.spinner) process.env.OSM_SPINNER = '1';
}
