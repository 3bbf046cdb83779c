/**
 * `osm func eval` and `osm func list`. Eval renders `{{…}}` first (the target and -p values are
 * escaped as data wherever they land, so a hostile value stays a string), then evaluates the JS
 * (reference server-api §10.1 "/functions/eval").
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { optionsOf } from '../context.js';
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

/** Renders the script like /functions/eval: only when it contains `{{`; supplied values are tainted. */
export function renderScript(script: string, vars: Record<string, unknown>): string {
  if (!script.includes('{{')) return script;
  return renderJs(script, vars, new Set(Object.keys(vars)));
}

/** `osm func eval '<script>' [-t target] [-p k=v]... [--json]` (also `osm func -e '<script>'`). */
export async function funcEval(command: Command, scriptArg?: string): Promise<void> {
  const o = optionsOf<EvalFlags>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const script = scriptArg ?? o.eval;
  if (script === undefined && command.name() === 'func') {
    command.outputHelp();
    return;
  }
  if (script === undefined || script.trim() === '') {
    throw errors.badRequest("a script is required: osm func eval '<script>' (or -e '<script>')");
  }
  const vars: Record<string, unknown> = { ...parseParams(o.params ?? []) };
  if (o.target) {
    vars.target = o.target;
    vars.Target = o.target;
  }
  let timeoutMs: number | undefined;
  try {
    timeoutMs = parseDuration(o.timeout ?? '10s');
  } catch (err) {
    throw errors.validation(`timeout: ${(err as Error).message}`);
  }
  const rendered = renderScript(script, vars);
  // With --json stdout carries one JSON document, so printed lines go to stderr.
  const log = o.json ? (line: string) => ui.err(line) : (line: string) => ui.out(line);
  const { value } = evaluate(rendered, vars, { timeoutMs: timeoutMs ?? 10_000, ctx: { target: o.target, log } });
  if (o.json) ui.json({ result: value, rendered_script: rendered });
  else ui.out(typeof value === 'string' ? value : JSON.stringify(value));
}

/** `osm func list [category]`: one table per category (signature, returns, description); --json as the API. */
export async function funcList(command: Command, category?: string): Promise<void> {
  const o = optionsOf(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const categories = Object.keys(CATEGORY_TITLES);
  if (category !== undefined && !categories.includes(category)) {
    throw errors.notFound(`unknown function category: ${category} (categories: ${categories.join(', ')})`);
  }
  const wanted = category ? [category] : categories;
  if (o.json) {
    const functions: Record<string, { name: string; description: string; return_type: string }[]> = {};
    for (const c of wanted) {
      functions[c] = FUNCTION_CATALOG.filter((e) => e.category === c).map((e) => ({ name: e.signature, description: e.description, return_type: e.return_type }));
    }
    ui.json({ functions });
    return;
  }
  const color = colorEnabled(o.disableColor);
  let total = 0;
  for (const c of wanted) {
    const entries = FUNCTION_CATALOG.filter((e) => e.category === c);
    if (entries.length === 0) continue;
    total += entries.length;
    ui.out(ui.chalk.bold(`${CATEGORY_TITLES[c]} (${c})`));
    const rows = entries.map((e) => [e.aliases.length ? `${e.signature}\n  ${e.aliases.join(', ')}` : e.signature, e.return_type, e.description]);
    ui.out(await renderTable(['Function', 'Returns', 'Description'], rows, { color }));
  }
  ui.out(`${total} functions`);
}
