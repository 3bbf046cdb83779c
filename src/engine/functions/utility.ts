/**
 * Utility functions (reference §10.2 "utility"). Commands run through `/bin/sh -c` or as argv
 * with the evaluation's remaining time budget; none of them can end the host process.
 */
import { fileURLToPath } from 'node:url';
import type { FnImpl } from './registry.js';
import { statSync } from 'node:fs';
import type { FnContext } from '../js-runtime.js';
import { resolveAcpAgent, type AcpSettings } from '../../llm/acp-agents.js';
import { argInt, argStr, asText, budgetMs, findExecutable, isMissing, ok, readText, runProgram, runShell, stateOf } from './helpers.js';
import { SkipSignal, ScriptError, scriptError } from './signals.js';

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The reference's emptiness: nullish, blank or "undefined" strings, empty arrays. */
export function isEmptyValue(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v.trim() === '' || v === 'undefined';
  if (Array.isArray(v)) return v.length === 0;
  return false;
}

/** pick_valid's notion of a usable value (also rejects false and empty objects). */
function isValid(v: unknown): boolean {
  if (v === false || isEmptyValue(v)) return false;
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return Object.keys(v).length > 0;
  return true;
}

const OSM_BIN = fileURLToPath(new URL('../../../bin/osm.js', import.meta.url));

/**
 * The base and workflow folders of the calling run, for the child `osm run`: without them the child
 * would search (and record into) the default base folder instead of the one this run uses.
 * ctx.settings is the loaded settings (inline evaluation) or the settings object (evaluator process).
 */
function osmFolderArgs(ctx: FnContext): string[] {
  const raw = ctx.settings as { settings?: unknown } | undefined;
  const s = (raw && typeof raw === 'object' && 'settings' in raw ? raw.settings : raw) as { base_folder?: unknown; environments?: { workflows?: unknown } } | undefined;
  const args: string[] = [];
  if (typeof s?.base_folder === 'string' && s.base_folder !== '') args.push('--base-folder', s.base_folder);
  const wf = s?.environments?.workflows;
  if (typeof wf === 'string' && wf !== '') args.push('--workflow-folder', wf);
  return args;
}

/** Runs `osm [--base-folder B -F W] run -m|-f name -t target [-p k=v]...` and returns its combined output, trimmed. */
const runWorkflow = (flag: '-m' | '-f'): FnImpl => (ctx, n, t, p) => {
  const name = argStr(n);
  const target = argStr(t);
  if (name === null || target === null) return '';
  const args = [OSM_BIN, ...osmFolderArgs(ctx), 'run', flag, name, '-t', target];
  for (const kv of (argStr(p) ?? '').split(',').map((s) => s.trim()).filter(Boolean)) args.push('-p', kv);
  const r = runProgram(ctx, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return `${r.stdout}${r.stderr}`.trim();
};

/** stdout of a successful run, trimmed; '' otherwise. */
const stdoutIfOk = (r: ReturnType<typeof runProgram>) => (ok(r) ? r.stdout.trim() : '');

/** Interpreter argv for inline Python code (uv preferred, as the reference). */
function pythonArgs(code: string | null, file: string | null): { bin: string; args: string[]; input?: string } | null {
  if (findExecutable('uv')) return code !== null ? { bin: 'uv', args: ['run', '-'], input: code } : { bin: 'uv', args: ['run', file!] };
  const py = findExecutable('python3') ?? findExecutable('python');
  if (!py) return null;
  return code !== null ? { bin: py, args: ['-c', code] } : { bin: py, args: [file!] };
}

const ACP_CHILD = fileURLToPath(new URL('../../llm/acp-run-child.js', import.meta.url));
/** run_agent's limit (reference: 30 minutes). */
const AGENT_CAP_MS = 30 * 60_000;

/** The `acp` section of whichever settings shape the context carries (loaded settings or the plain object). */
function acpSettingsOf(ctx: FnContext): AcpSettings | undefined {
  const s = ctx.settings as { settings?: { acp?: AcpSettings }; acp?: AcpSettings } | undefined;
  return s?.settings?.acp ?? s?.acp;
}

/** The utility functions, by snake_case name (aliases come from the catalogue). */
export const utilityFunctions: Record<string, FnImpl> = {
  len: (_c, v) => {
    if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
    if (Array.isArray(v)) return v.length;
    return 0;
  },
  is_empty: (_c, v) => isEmptyValue(v),
  is_not_empty: (_c, v) => !isEmptyValue(v),
  printf: (ctx, m) => {
    const msg = asText(m);
    stateOf(ctx).emit(msg);
    return msg;
  },
  cat_file: (ctx, p) => {
    const path = argStr(p);
    const content = path === null ? '' : (readText(path) ?? '');
    if (content !== '') stateOf(ctx).emit(content.endsWith('\n') ? content.slice(0, -1) : content);
    return content;
  },
  exit: () => {
    // The reference ends the whole process here; a library must never do that.
    throw new ScriptError('error executing expression: exit() is not allowed');
  },
  skip: (_c, m) => {
    throw new SkipSignal(isMissing(m) ? undefined : asText(m));
  },
  exec_cmd: (ctx, c) => {
    const cmd = argStr(c);
    if (cmd === null) return '';
    return stdoutIfOk(runShell(ctx, cmd, { stdio: ['ignore', 'pipe', 'pipe'] }));
  },
  sleep: (ctx, s) => {
    let secs = argInt(s, 1);
    if (typeof s === 'number' && s > 0 && secs === 0) secs = 1;
    if (secs <= 0) secs = 1;
    // Atomics.wait blocks this thread without spinning; capped by the evaluation's budget.
    const left = Math.max(1, stateOf(ctx).deadline - Date.now());
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(secs * 1000, left));
    // Atomics.wait may wake a hair before the deadline: a sleep that outlasts the budget ends the script.
    if (secs * 1000 >= left) throw scriptError(`script timed out (sleep(${secs}) outlasts the time left)`);
    return null;
  },
  command_exists: (_c, n) => {
    const name = argStr(n);
    return name !== null && findExecutable(name) !== null;
  },
  pick_valid: (_c, ...args) => {
    for (const v of args.slice(0, 10)) if (isValid(v)) return v;
    return '';
  },
  run_module: runWorkflow('-m'),
  run_flow: runWorkflow('-f'),
  exec_python: (ctx, c) => {
    const code = argStr(c);
    const inv = code === null ? null : pythonArgs(code, null);
    if (!inv) return '';
    return stdoutIfOk(runProgram(ctx, inv.bin, inv.args, { input: inv.input ?? '', stdio: ['pipe', 'pipe', 'pipe'] }));
  },
  exec_python_file: (ctx, f) => {
    const file = argStr(f);
    const inv = file === null ? null : pythonArgs(null, file);
    if (!inv) return '';
    return stdoutIfOk(runProgram(ctx, inv.bin, inv.args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  },
  exec_ts: (ctx, c) => {
    const code = argStr(c);
    const bun = findExecutable('bun');
    if (code === null || !bun) return '';
    return stdoutIfOk(runProgram(ctx, bun, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] }));
  },
  exec_ts_file: (ctx, f) => {
    const file = argStr(f);
    const bun = findExecutable('bun');
    if (file === null || !bun) return '';
    return stdoutIfOk(runProgram(ctx, bun, ['run', file], { stdio: ['ignore', 'pipe', 'pipe'] }));
  },
  sudo_auth: (ctx, p) => {
    if (!findExecutable('sudo')) return false;
    const password = argStr(p);
    // -S reads the password from stdin; -n never prompts. No keep-alive loop: a library call must not leave processes behind.
    const r = password === null
      ? runProgram(ctx, 'sudo', ['-n', '-v'], { stdio: ['ignore', 'pipe', 'pipe'], capMs: 30_000 })
      : runProgram(ctx, 'sudo', ['-S', '-p', '', '-v'], { input: `${password}\n`, stdio: ['pipe', 'pipe', 'pipe'], capMs: 30_000 });
    return ok(r);
  },
  run_agent: (ctx, m, a) => {
    // An ACP agent (reference): named in settings `acp` or built in; "" on any error.
    const message = argStr(m);
    const found = resolveAcpAgent(acpSettingsOf(ctx), argStr(a) ?? undefined);
    if (message === null || message.trim() === '' || !found) return '';
    const cwd = ctx.output && isDir(ctx.output) ? ctx.output : process.cwd();
    // The child enforces the timeout itself (and ends the agent's process group); the sync wait has a margin.
    const timeoutMs = Math.max(1000, budgetMs(ctx, AGENT_CAP_MS) - 2000);
    const input = JSON.stringify({ command: found.agent.command, args: found.agent.args, env: { ...process.env, ...found.agent.env }, cwd, prompt: message, timeoutMs });
    const r = runProgram(ctx, process.execPath, [ACP_CHILD], { input, stdio: ['pipe', 'pipe', 'pipe'], capMs: AGENT_CAP_MS });
    if (!ok(r)) return '';
    try {
      const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { output?: string };
      return typeof out.output === 'string' ? out.output : '';
    } catch {
      return '';
    }
  },
};
