/**
 * The lookup tables every completion script needs, computed once from the command tree: which
 * words are subcommands of a path (aliases resolved to the real name), which flags each path
 * has, what a flag's value and each positional argument complete to.
 */
import { allCommands, optionNames, type CommandSpec } from './spec.js';
import { encodeHint } from './shell-quote.js';

export interface CompletionTables {
  /** path ('' = root, 'workflow show') → visible subcommand names and aliases. */
  subcommands: Map<string, { word: string; canonical: string; description: string }[]>;
  /** path → flag spellings with their descriptions. */
  flags: Map<string, { names: string[]; description: string; hint: string }[]>;
  /** path → positional argument hints in order; the last may be variadic. */
  args: Map<string, { hint: string; variadic: boolean; description: string; name: string }[]>;
  /** The root's (global) flags, valid after any command. */
  globalFlags: { names: string[]; description: string; hint: string }[];
  /** Every path, root first. */
  paths: string[];
}

/** Builds the tables of `root`. */
export function completionTables(root: CommandSpec): CompletionTables {
  const t: CompletionTables = { subcommands: new Map(), flags: new Map(), args: new Map(), globalFlags: [], paths: [] };
  for (const c of allCommands(root)) {
    const path = c.path.join(' ');
    t.paths.push(path);
    t.subcommands.set(
      path,
      c.commands.flatMap((s) => [s.name, ...s.aliases].map((word) => ({ word, canonical: s.name, description: s.description }))),
    );
    t.flags.set(path, c.options.map((o) => ({ names: optionNames(o), description: o.description, hint: encodeHint(o.hint) })));
    t.args.set(path, c.args.map((a) => ({ hint: encodeHint(a.hint), variadic: a.variadic, description: a.description, name: a.name })));
  }
  t.globalFlags = t.flags.get('') ?? [];
  return t;
}
