/**
 * Which tools an `agent` step may give its LLM (pure data, shared by validation and the engine).
 * A preset is an osm function from the catalogue, or `run_command` (alias `bash`, the reference's
 * name) for the step's allowed_commands. Functions that take code or a shell command as text, end
 * or mutate the osm process, or read the database with free SQL are never tools: the model's
 * arguments are untrusted data (a tool result it read may have told it what to ask for).
 */
import { FUNCTION_CATALOG } from '../engine/functions/catalog.js';

/** The preset that starts one of the step's allowed_commands (argv, never a shell). */
export const COMMAND_PRESET = 'run_command';

/** Catalogue functions that are never agent tools, with the reason shown to the workflow author. */
export const DENIED_PRESETS: Record<string, string> = {
  exec_cmd: 'runs shell text',
  exec_python: 'runs code',
  exec_python_file: 'runs code',
  exec_ts: 'runs code',
  exec_ts_file: 'runs code',
  run_module: 'starts workflows',
  run_flow: 'starts workflows',
  run_agent: 'starts another agent',
  sudo_auth: 'handles sudo credentials',
  exit: 'ends the script',
  skip: 'ends the module',
  sleep: 'blocks the step',
  os_setenv: "changes osm's own environment",
  set_var: 'has no effect outside one script',
  get_var: 'has no effect outside one script',
  db_select: 'takes free SQL',
  db_select_to_file: 'takes free SQL',
  db_select_to_jsonl: 'takes free SQL',
  db_update: 'writes any database field',
};

/** Every catalogue name and alias → its snake_case name. */
const BY_NAME: Map<string, string> = new Map(FUNCTION_CATALOG.flatMap((e) => [[e.name, e.name] as [string, string], ...e.aliases.map((a): [string, string] => [a, e.name])]));

/** The canonical preset of a name as written (`bash` → run_command, camelCase → snake_case); undefined when unknown. */
export function canonicalPreset(name: string): string | undefined {
  if (name === COMMAND_PRESET || name === 'bash') return COMMAND_PRESET;
  return BY_NAME.get(name);
}

/** Why a preset may not be used ('' when it may). */
export function presetProblem(name: string): string {
  const canonical = canonicalPreset(name);
  if (!canonical) return `unknown agent tool preset '${name}' (use an osm function name from 'osm func list', or run_command)`;
  const denied = DENIED_PRESETS[canonical];
  return denied ? `agent tool preset '${name}' is not allowed: it ${denied}` : '';
}
