/**
 * The man page `osm(1)`, generated from the command tree: one page, a subsection per command
 * with its usage, aliases, arguments and flags, so `man osm` cannot drift from `osm --help`.
 */
import { allCommands, optionNames, type CommandSpec, type OptionSpec } from './spec.js';

/** Escapes text for roff: backslashes, and a leading `.` or `'` that would start a request. */
export function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1')
    // Non-ASCII as named code points: groff without preconv would warn and drop them.
    .replace(/[^\x00-\x7f]/gu, (ch) => `\\[u${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

function flagLabel(o: OptionSpec): string {
  const names = optionNames(o).map((n) => `\\fB${roff(n)}\\fR`).join(', ');
  return o.value ? `${names} \\fI${roff(o.value.slice(1, -1))}\\fR` : names;
}

function flagText(o: OptionSpec): string {
  const extra: string[] = [];
  if (o.choices?.length) extra.push(`one of: ${o.choices.join(', ')}`);
  if (o.defaultValue !== undefined && o.defaultValue !== '') extra.push(`default: ${o.defaultValue}`);
  return roff(extra.length ? `${o.description} (${extra.join('; ')})` : o.description);
}

function options(list: OptionSpec[]): string[] {
  return list.flatMap((o) => ['.TP', flagLabel(o), flagText(o)]);
}

function section(c: CommandSpec): string[] {
  const name = ['osm', ...c.path].join(' ');
  const out = ['.SS ' + `"${roff(name)}"`, `\\fB${roff(name)}\\fR ${roff(c.usage)}`, '.br', roff(c.description)];
  if (c.aliases.length) out.push('.br', `Aliases: ${c.aliases.map((a) => `\\fB${roff(a)}\\fR`).join(', ')}.`);
  if (c.args.length) {
    out.push('.PP', 'Arguments:', '.RS');
    for (const a of c.args) {
      const extra = a.choices?.length ? ` (one of: ${a.choices.join(', ')})` : '';
      out.push('.TP', `\\fI${roff(a.name)}\\fR${a.variadic ? '...' : ''}${a.required ? '' : ' (optional)'}`, roff(`${a.description}${extra}`) || '\\&');
    }
    out.push('.RE');
  }
  if (c.options.length) out.push('.PP', 'Flags:', '.RS', ...options(c.options), '.RE');
  return out;
}

/** The man page for `root` (version and date are passed in so a build is reproducible). */
export function manPage(root: CommandSpec, version: string, date: string): string {
  const commands = allCommands(root).filter((c) => c.path.length > 0);
  const top = root.commands.map((c) => `\\fB${roff(c.name)}\\fR`).join(', ');
  const lines = [
    '.\\" Generated from the osm program (npm run build): do not edit.',
    `.TH OSM 1 "${date}" "osm ${roff(version)}" "osm manual"`,
    '.SH NAME',
    `osm \\- ${roff(root.description.replace(/^osm\s*[—-]\s*/, ''))}`,
    '.SH SYNOPSIS',
    '\\fBosm\\fR [\\fIglobal flags\\fR] \\fIcommand\\fR [\\fIsubcommand\\fR] [\\fIflags\\fR] [\\fIarguments\\fR]',
    '.SH DESCRIPTION',
    'osm runs recon and scanning workflows (Osmedeus v5 YAML) against targets, records every run, step,',
    'asset and finding in a database, and serves them over an HTTP API (\\fBosm serve\\fR).',
    `Commands: ${top}.`,
    '.PP',
    'Every command prints help with \\fB\\-h\\fR; \\fB\\-H\\fR prints usage examples.',
    '.SH GLOBAL FLAGS',
    'These flags are accepted before or after any command.',
    ...options(root.options),
    '.SH COMMANDS',
    ...commands.flatMap(section),
    '.SH ENVIRONMENT',
    '.TP',
    '\\fBOSM_BASE_FOLDER\\fR',
    'base folder when \\fB\\-b\\fR is not given (default \\fI~/osmedeus\\-base\\fR)',
    '.TP',
    '\\fBOSM_SERVER\\fR, \\fBOSM_API_KEY\\fR',
    'daemon URL and API key for commands that accept \\fB\\-\\-server\\fR',
    '.TP',
    '\\fBNO_COLOR\\fR',
    'no ANSI colours (also when the output is not a terminal)',
    '.SH FILES',
    '.TP',
    '\\fI~/osmedeus\\-base/osm\\-settings.yaml\\fR',
    'settings (created on first use with random secrets, mode 0600)',
    '.TP',
    '\\fI~/osmedeus\\-base/database\\-osm.sqlite\\fR',
    'runs, steps, assets and findings',
    '.TP',
    '\\fI~/osmedeus\\-base/workflows/\\fR',
    'installed workflows (flows and modules)',
    '.SH EXIT STATUS',
    '0 on success; 1 on an error (printed as \\fBError:\\fR \\fImessage\\fR on standard error) or a failed run.',
    '.SH SEE ALSO',
    'The README and docs/ folder of the osm package; \\fBosm completion\\fR for shell completion scripts.',
  ];
  return `${lines.join('\n')}\n`;
}
