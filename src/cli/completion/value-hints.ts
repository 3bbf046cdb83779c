/**
 * What a flag's value or a positional argument completes to. Names the program already uses
 * (`--flow`, `<run>`, `<workspace>`) decide it, so a new command that follows the conventions
 * gets dynamic completion without touching this file.
 */

/** Values osm itself lists at completion time (`osm __complete <source>`). */
export const DYNAMIC_SOURCES = ['workflows', 'flows', 'modules', 'runs', 'workspaces'] as const;
export type DynamicSource = (typeof DYNAMIC_SOURCES)[number];

export type ValueHint =
  | { kind: 'none' }
  | { kind: 'free' }
  | { kind: 'file' }
  | { kind: 'dir' }
  | { kind: 'choices'; values: string[] }
  | { kind: 'dynamic'; source: DynamicSource; files?: boolean };

/** Flags whose value is one of a fixed list though commander does not enforce it. */
const FIXED_CHOICES: Record<string, string[]> = {
  '--tactic': ['aggressive', 'default', 'gently'],
  'workflow validate --severity': ['info', 'warning', 'error'],
  'workflow validate --format': ['pretty', 'json', 'github'],
};

const DYNAMIC_FLAGS: Record<string, DynamicSource> = {
  '--flow': 'flows',
  '--module': 'modules',
  '--workflow': 'workflows',
  '--resume': 'runs',
  '--space': 'workspaces',
  '--workspace': 'workspaces',
};

const DIR_FLAGS = new Set(['--base-folder', '--workflow-folder', '--workspaces-folder']);
const FILE_FLAGS = new Set(['--output', '--settings-file', '--log-file', '--target-file', '--params-file', '--from-file', '--function-file']);

/** The completion of a flag's value. */
export function optionHint(path: string[], flag: string, placeholder: string | undefined, choices?: readonly string[]): ValueHint {
  if (!placeholder) return { kind: 'none' };
  if (choices?.length) return { kind: 'choices', values: [...choices] };
  const fixed = FIXED_CHOICES[`${path.join(' ')} ${flag}`] ?? FIXED_CHOICES[flag];
  if (fixed) return { kind: 'choices', values: fixed };
  const dynamic = DYNAMIC_FLAGS[flag];
  if (dynamic) return { kind: 'dynamic', source: dynamic };
  if (DIR_FLAGS.has(flag) || /^<dir/.test(placeholder)) return { kind: 'dir' };
  if (FILE_FLAGS.has(flag) || /^<file/.test(placeholder)) return { kind: 'file' };
  return { kind: 'free' };
}

/** The completion of a positional argument, by its name (and the command for the odd one out). */
export function argumentHint(path: string[], name: string, choices?: readonly string[]): ValueHint {
  if (choices?.length) return { kind: 'choices', values: [...choices] };
  const where = path.join(' ');
  if (where === 'workflow show') return { kind: 'dynamic', source: 'workflows', files: true };
  if (where === 'workflow validate') return { kind: 'dynamic', source: 'workflows', files: true };
  if (name === 'run' || name === 'run-id') return { kind: 'dynamic', source: 'runs' };
  if (name === 'workspace') return { kind: 'dynamic', source: 'workspaces' };
  if (name === 'file' || name === 'source' || name === 'path') return { kind: 'file' };
  return { kind: 'free' };
}
