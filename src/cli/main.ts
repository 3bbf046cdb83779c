import { Command, Option } from 'commander';
import { VERSION, REFERENCE_VERSION } from '../version.js';
import { messageOf, isOsmError } from '../errors.js';
import { COMMAND_MODULES } from './commands/index.js';

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
    .addOption(new Option('--ci-output-format', 'JSON output for CI (implies --silent)').hideHelp())
    .showSuggestionAfterError(true)
    .configureOutput({
      outputError: (str, write) => write(str),
    });
  for (const register of COMMAND_MODULES) register(program);
  program
    .command('version')
    .description('print the version (same as --version); --json for scripts')
    .action((_opts, command: Command) => {
      if (command.optsWithGlobals().json) process.stdout.write(`${JSON.stringify({ name: 'osm', version: VERSION, compatible_with: `osmedeus ${REFERENCE_VERSION}` })}\n`);
      else process.stdout.write(`${versionText()}\n`);
    });
  return program;
}

function versionText(): string {
  return [
    `osm - security-automation workflow engine`,
    `Version: ${VERSION}`,
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
  }
}
