/**
 * The commander program as plain data: what the completion scripts and the man page are generated
 * from, so neither can list a command or flag the program does not have (or miss one it has).
 */
import type { Argument, Command, Option } from 'commander';
import { argumentHint, optionHint, type ValueHint } from './value-hints.js';

export interface OptionSpec {
  short?: string;
  long?: string;
  /** `<name>` / `[name]` placeholder when the flag takes a value. */
  value?: string;
  description: string;
  choices?: string[];
  defaultValue?: string;
  hint: ValueHint;
}

export interface ArgumentSpec {
  name: string;
  required: boolean;
  variadic: boolean;
  description: string;
  choices?: string[];
  hint: ValueHint;
}

export interface CommandSpec {
  name: string;
  aliases: string[];
  /** Names from the root, e.g. ['workflow', 'show']; [] for the program itself. */
  path: string[];
  description: string;
  usage: string;
  options: OptionSpec[];
  args: ArgumentSpec[];
  commands: CommandSpec[];
}

/** True for commands commander hides from help (`{ hidden: true }`). */
function isHidden(cmd: Command): boolean {
  return Boolean((cmd as unknown as { _hidden?: boolean })._hidden);
}

function optionSpec(o: Option, path: string[]): OptionSpec {
  const placeholder = /[<[][^>\]]*[>\]]/.exec(o.flags)?.[0];
  const spec: OptionSpec = {
    description: o.description,
    hint: optionHint(path, o.long ?? o.short ?? '', placeholder, o.argChoices),
  };
  if (o.short) spec.short = o.short;
  if (o.long) spec.long = o.long;
  if (placeholder) spec.value = placeholder;
  if (o.argChoices) spec.choices = [...o.argChoices];
  if (o.defaultValue !== undefined && typeof o.defaultValue !== 'boolean') spec.defaultValue = String(o.defaultValue);
  return spec;
}

function argumentSpec(a: Argument, path: string[]): ArgumentSpec {
  const spec: ArgumentSpec = {
    name: a.name(),
    required: a.required,
    variadic: a.variadic,
    description: a.description,
    hint: argumentHint(path, a.name(), a.argChoices),
  };
  if (a.argChoices) spec.choices = [...a.argChoices];
  return spec;
}

function commandSpec(cmd: Command, path: string[]): CommandSpec {
  return {
    name: cmd.name(),
    aliases: cmd.aliases(),
    path,
    description: cmd.description(),
    usage: cmd.usage(),
    options: cmd.options.filter((o) => !o.hidden).map((o) => optionSpec(o, path)),
    args: cmd.registeredArguments.map((a) => argumentSpec(a, path)),
    commands: cmd.commands
      .filter((c) => !isHidden(c) && c.name() !== 'help')
      .map((c) => commandSpec(c, [...path, c.name()])),
  };
}

/** The visible command tree of `program` (hidden commands and flags are left out, as in --help). */
export function programSpec(program: Command): CommandSpec {
  return commandSpec(program, []);
}

/** Every command of the tree, depth first, the root first. */
export function allCommands(root: CommandSpec): CommandSpec[] {
  const out: CommandSpec[] = [];
  const visit = (c: CommandSpec) => {
    out.push(c);
    c.commands.forEach(visit);
  };
  visit(root);
  return out;
}

/** Every spelling of an option (`-f`, `--flow`). */
export function optionNames(o: OptionSpec): string[] {
  return [o.short, o.long].filter((x): x is string => Boolean(x));
}
