/**
 * The tools of an `agent` step, built from its `agent_tools`: osm catalogue functions, the step's
 * allowed commands (`run_command`), and custom tools whose handler is a function script. The
 * model's arguments are untrusted data: they reach functions as script variables (never script
 * text), commands as argv (never a shell, argv[0] matched exactly against allowed_commands),
 * file paths only inside the step's allowed folders, and `workspace` arguments only as the run's
 * own workspace.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import type { AgentToolSpec, Step } from '../../workflow/types.js';
import { COMMAND_PRESET, canonicalPreset, presetProblem } from '../../workflow/agent-presets.js';
import { FUNCTION_CATALOG, type CatalogEntry } from '../functions/catalog.js';
import { render } from '../../workflow/template.js';
import type { AgentTool } from '../../llm/agent-loop.js';
import { runScriptAsync, resultText } from '../scripts.js';
import { spawnCommand } from '../process.js';
import { commandExists } from '../deps-check.js';
import { StepFailure, type Scope, type StepContext } from '../types.js';

/** Parameter names that always hold a file or folder path. */
const PATH_PARAMS = new Set([
  'path', 'src', 'dst', 'dest', 'source', 'output', 'file1', 'file2', 'folder', 'keep_file', 'input_file', 'output_file',
  'input_path', 'output_path', 'template_path', 'repo_path', 'file_path',
]);
/** Categories where a parameter named `input` is a file. */
const INPUT_IS_PATH = new Set(['file', 'unix_commands', 'output', 'url_processing', 'markdown']);
/** Functions whose `pattern` is a glob of paths rather than a regex. */
const GLOB_PATTERN = new Set(['glob', 'merge_files']);
const OUTPUT_CAP = 16 * 1024;

interface Param {
  name: string;
  optional: boolean;
}

/** Parameters of a catalogue signature (`read_file(path)`, `clean_sub(path, target?)`). */
export function signatureParams(signature: string): Param[] {
  const inner = signature.slice(signature.indexOf('(') + 1, signature.lastIndexOf(')'));
  return inner
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p && p !== '...')
    .map((p) => ({ name: p.replace(/\?$/, ''), optional: p.endsWith('?') }));
}

function isPathParam(entry: CatalogEntry, name: string): boolean {
  if (PATH_PARAMS.has(name)) return true;
  if (name === 'input') return INPUT_IS_PATH.has(entry.category);
  if (name === 'pattern') return GLOB_PATTERN.has(entry.name);
  return false;
}

/** The real path of `p`, or of its deepest existing ancestor joined with the rest (files to be created). */
function realish(p: string): string {
  let cur = p;
  const rest: string[] = [];
  while (!existsSync(cur)) {
    const parent = dirname(cur);
    if (parent === cur) break;
    rest.unshift(cur.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
    cur = parent;
  }
  let real = cur;
  try {
    real = realpathSync(cur);
  } catch {
    /* keep as is */
  }
  return rest.length ? resolve(real, ...rest) : real;
}

/** Resolves a model-given path against `base` and refuses it outside every root (symlinks followed). */
export function confinePath(value: unknown, base: string, roots: string[]): string {
  if (typeof value !== 'string' || value.trim() === '') throw new Error('a path argument must be a non-empty string');
  if (value.includes('\0')) throw new Error('a path argument must not contain NUL');
  // A glob keeps its pattern part; the folder before the first wildcard is what is checked.
  const wild = value.search(/[*?[]/);
  const fixed = wild >= 0 ? value.slice(0, value.lastIndexOf('/', wild) + 1) || '.' : value;
  const abs = resolve(base, fixed);
  const real = realish(abs);
  const inside = roots.some((r) => real === r || real.startsWith(r.endsWith(sep) ? r : r + sep));
  if (!inside) throw new Error(`path '${value}' is outside the folders this agent may use (${roots.join(', ')})`);
  return wild >= 0 ? resolve(base, value) : abs;
}

/** The folders the step's file tools may use: `allowed_paths` rendered, else the run's output folder. */
export function agentRoots(step: Step, scope: Scope): { base: string; roots: string[] } {
  const output = String(scope.vars.Output ?? '') || process.cwd();
  const base = resolve(output);
  const listed = (step.allowed_paths ?? []).map((p) => render(p, scope.vars).trim()).filter(Boolean);
  const roots = (listed.length ? listed : [base]).map((p) => realish(isAbsolute(p) ? p : resolve(base, p)));
  return { base, roots };
}

function functionTool(entry: CatalogEntry, scope: Scope, where: { base: string; roots: string[] }): AgentTool {
  const params = signatureParams(entry.signature);
  const properties = Object.fromEntries(params.map((p) => [p.name, { description: `${p.name}${isPathParam(entry, p.name) ? ' (a path inside the allowed folders)' : ''}` }]));
  const workspace = String(scope.vars.Workspace ?? scope.vars.TargetSpace ?? '');
  return {
    name: entry.name,
    description: `${entry.description} — osm function ${entry.signature}, returns ${entry.return_type}`,
    parameters: { type: 'object', properties, required: params.filter((p) => !p.optional).map((p) => p.name) },
    async run(args) {
      const values: unknown[] = [];
      for (const p of params) {
        let v = args[p.name];
        if (v === undefined) {
          if (!p.optional) throw new Error(`missing argument '${p.name}'`);
          break;
        }
        if (isPathParam(entry, p.name)) v = confinePath(v, where.base, where.roots);
        if (p.name === 'workspace' && v !== workspace) throw new Error(`workspace must be this run's workspace '${workspace}'`);
        values.push(v);
      }
      // The arguments are a variable of the script, never part of its text.
      const callScope: Scope = { ...scope, vars: { ...scope.vars, osm_agent_args: values }, tainted: new Set([...scope.tainted, 'osm_agent_args']) };
      const r = await runScriptAsync(`${entry.name}(...osm_agent_args)`, callScope);
      return resultText(r.value);
    },
  };
}

function customTool(spec: AgentToolSpec, scope: Scope): AgentTool {
  return {
    name: spec.name!,
    description: spec.description ?? spec.name!,
    parameters: spec.parameters ?? { type: 'object', properties: {} },
    async run(args) {
      const callScope: Scope = { ...scope, vars: { ...scope.vars, args }, tainted: new Set([...scope.tainted, 'args']) };
      const r = await runScriptAsync(spec.handler!, callScope);
      return resultText(r.value);
    },
  };
}

function commandTool(allowed: string[], scope: Scope, ctx: StepContext, cwd: string): AgentTool {
  const path = scope.exec.baseEnv.PATH ?? process.env.PATH ?? '';
  return {
    name: COMMAND_PRESET,
    description: `Run one of these programs with arguments (no shell: pipes, redirections and variables are not interpreted): ${allowed.join(', ')}. Returns exit_code, stdout and stderr.`,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: allowed, description: 'program name' },
        args: { type: 'array', items: { type: 'string' }, description: 'arguments, one per item' },
      },
      required: ['command'],
    },
    async run(args, signal) {
      const command = args.command;
      if (typeof command !== 'string' || !allowed.includes(command)) throw new Error(`command must be one of: ${allowed.join(', ')}`);
      const list = args.args ?? [];
      if (!Array.isArray(list) || list.some((a) => typeof a !== 'string' && typeof a !== 'number')) throw new Error('args must be a list of strings');
      if (!commandExists(command, path)) throw new Error(`command '${command}' is not installed (not found on PATH)`);
      const res = await spawnCommand({ argv: [command, ...list.map(String)], baseEnv: scope.exec.baseEnv, cwd, signal, output: scope.exec.output.sink(ctx.logFile, ctx.part), timeoutMs: ctx.timeoutMs, stdoutCap: OUTPUT_CAP, stderrCap: OUTPUT_CAP / 4 });
      return JSON.stringify({ exit_code: res.exitCode, stdout: res.stdout, stderr: res.stderr, ...(res.truncated ? { truncated: true } : {}), ...(res.timedOut ? { timed_out: true } : {}) });
    },
  };
}

/** The step's tools; throws StepFailure for a tool the step may not have (validation normally caught it). */
export function buildAgentTools(step: Step, scope: Scope, ctx: StepContext): AgentTool[] {
  const where = agentRoots(step, scope);
  const tools: AgentTool[] = [];
  for (const spec of step.agent_tools ?? []) {
    if (spec.preset) {
      const problem = presetProblem(spec.preset);
      if (problem) throw new StepFailure(problem);
      const name = canonicalPreset(spec.preset)!;
      if (name === COMMAND_PRESET) {
        const allowed = step.allowed_commands ?? [];
        if (allowed.length === 0) throw new StepFailure(`agent tool preset '${spec.preset}' needs allowed_commands (osm never gives an agent a shell)`);
        tools.push(commandTool(allowed, scope, ctx, where.base));
      } else {
        tools.push(functionTool(FUNCTION_CATALOG.find((e) => e.name === name)!, scope, where));
      }
    } else if (spec.name && spec.handler) {
      tools.push(customTool(spec, scope));
    } else {
      throw new StepFailure('custom agent tool must have a name and a handler');
    }
  }
  return tools;
}
