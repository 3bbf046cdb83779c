import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../settings/load.js';
import { builtinVariables } from '../../workflow/builtin-vars.js';
import { builtinPathsOf } from '../../engine/module-exec.js';
/**
 * `osm func eval` and `osm func list`. Eval renders `{{…}}` first (the target and -p values are
 * escaped as data wherever they land, so a hostile value stays a string), then evaluates the JS
 * (reference server-api §10.1 "/functions/eval").
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';
import { errors } from '../../errors.js';
import { parseDuration } from '../../util/duration.js';
import { renderJs } from '../../engine/safe-render.js';
import { evaluate } from '../../engine/js-runtime.js';
import { CATEGORY_TITLES, FUNCTION_CATALOG } from '../../engine/functions/catalog.js';

interface EvalFlags {
  eval?: string;
  target?: string;
  params?: string[];
  timeout?: string;
  stdin?: boolean;
  functionFile?: string;
  function?: string;
  targetFile?: string;
}

const paramSchema = z.array(z.string().regex(/^[A-Za-z_][\w.-]*=/, 'expected key=value (key: letters, digits, _ . -)'));

/** `k=v` flags → variables; every malformed one reported as `params[i]: message`. */
export function parseParams(raw: string[]): Record<string, string> {
  const parsed = paramSchema.safeParse(raw);
  if (!parsed.success) {
    throw errors.validation(parsed.error.issues.map((i) => `params${i.path.map((p) => `[${String(p)}]`).join('')}: ${i.message}`).join('\n'));
  }
  const out: Record<string, string> = {};
  for (const kv of parsed.data) {
    const at = kv.indexOf('=');
    out[kv.slice(0, at)] = kv.slice(at + 1);
  }
  return out;
}

function cliBuiltins(o: GlobalOptions, target: string): { vars: Record<string, unknown>; settings?: unknown } {
  try {
    const loaded = loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
    // Functions that read settings (run_agent's ACP agents, notifications) see the same ones as a run.
    return { vars: builtinVariables({ target, paths: builtinPathsOf(loaded), scanTactic: loaded.settings.scan_tactic, runUuid: randomUUID(), moduleName: 'eval' }), settings: loaded };
  } catch {
    return { vars: {} };
  }
}

/** Renders the script like /functions/eval: only when it contains `{{`; supplied values are tainted. */
export function renderScript(script: string, vars: Record<string, unknown>): string {
  if (!script.includes('{{')) return script;
  return renderJs(script, vars, new Set(Object.keys(vars)));
}

/**
 * `osm func eval '<script>' [-t target] [-p k=v]... [--json]` (also `osm func -e '<script>'`,
 * `--stdin`, `--function-file f`, `-f fn args…` and `-T targets.txt` for one evaluation per target).
 */
export async function funcEval(command: Command, scriptArgs?: string[] | string): Promise<void> {
  const o = optionsOf<EvalFlags>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const args = Array.isArray(scriptArgs) ? scriptArgs : scriptArgs === undefined ? [] : [scriptArgs];
  let script: string | undefined;
  if (o.function) {
    if (!/^[A-Za-z_$][\w$]*$/.test(o.function)) throw errors.badRequest(`-f: not a function name: ${JSON.stringify(o.function)}`);
    script = `${o.function}(${args.map((a) => JSON.stringify(a)).join(', ')})`;
  } else if (o.stdin) {
    script = readFileSync(0, 'utf8');
  } else if (o.functionFile) {
    script = readFileSync(o.functionFile, 'utf8');
  } else {
    script = args.length ? args.join(' ') : o.eval;
  }
  if (script === undefined && command.name() === 'func') {
    command.outputHelp();
    return;
  }
  if (script === undefined || script.trim() === '') {
    throw errors.badRequest("a script is required: osm func eval '<script>' (or -e '<script>')");
  }
  let timeoutMs: number | undefined;
  try {
    timeoutMs = parseDuration(o.timeout ?? '10s');
  } catch (err) {
    throw errors.validation(`timeout: ${(err as Error).message}`);
  }
  const targets = o.targetFile
    ? readFileSync(o.targetFile, 'utf8').split(/\r?\n/).map((t) => t.trim()).filter((t) => t && !t.startsWith('#'))
    : [o.target ?? ''];
  const results: { target: string; result: unknown; rendered_script: string }[] = [];
  for (const target of targets) {
    // Built-ins first (BaseFolder, Workspaces, Output, Today, threads …), as the reference renders them.
    const builtins = cliBuiltins(o, target);
    const vars: Record<string, unknown> = { ...builtins.vars, ...parseParams(o.params ?? []) };
    if (target) {
      vars.target = target;
      vars.Target = target;
    }
    const rendered = renderScript(script, vars);
    // With --json stdout carries one JSON document, so printed lines go to stderr.
    const log = o.json ? (line: string) => ui.err(line) : (line: string) => ui.out(line);
    const { value } = evaluate(rendered, vars, { timeoutMs: timeoutMs ?? 10_000, ctx: { target, log, settings: builtins.settings } });
    results.push({ target, result: value, rendered_script: rendered });
    if (!o.json) ui.out(typeof value === 'string' ? value : JSON.stringify(value));
  }
  if (o.json) {
    const strip = (r: (typeof results)[number]) => ({ result: r.result, rendered_script: r.rendered_script });
    ui.json(o.targetFile ? results : strip(results[0]!));
  }
}

/** `osm func list [category]`: one table per category (signature, returns, description); --json as the API. */
export async function funcList(command: Command, category?: string): Promise<void> {
  const o = optionsOf<{ search?: string; example?: boolean }>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const categories = Object.keys(CATEGORY_TITLES);
  const needle = o.search?.trim().toLowerCase() ?? '';
  const matches = (e: (typeof FUNCTION_CATALOG)[number]) =>
    !needle || e.name.toLowerCase().includes(needle) || e.aliases.some((a) => a.toLowerCase().includes(needle)) || e.description.toLowerCase().includes(needle);
  if (category !== undefined && !categories.includes(category)) {
    throw errors.notFound(`unknown function category: ${category} (categories: ${categories.join(', ')})`);
  }
  const wanted = category ? [category] : categories;
  if (o.json) {
    const functions: Record<string, { name: string; description: string; return_type: string }[]> = {};
    for (const c of wanted) {
      functions[c] = FUNCTION_CATALOG.filter((e) => e.category === c && matches(e)).map((e) => ({ name: e.signature, description: e.description, return_type: e.return_type }));
    }
    ui.json({ functions });
    return;
  }
  const color = colorEnabled(o.disableColor);
  let total = 0;
  for (const c of wanted) {
    const entries = FUNCTION_CATALOG.filter((e) => e.category === c && matches(e));
    if (entries.length === 0) continue;
    total += entries.length;
    ui.out(ui.chalk.bold(`${CATEGORY_TITLES[c]} (${c})`));
    const rows = entries.map((e) => [
      e.aliases.length ? `${e.signature}\n  ${e.aliases.join(', ')}` : e.signature,
      e.return_type,
      o.example && e.example ? `${e.description}\n  e.g. ${e.example}` : e.description,
    ]);
    ui.out(await renderTable(['Function', 'Returns', 'Description'], rows, { color }));
  }
  ui.out(`${total} functions`);
}
