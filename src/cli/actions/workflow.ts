import { errors } from '../../errors.js';
import { readFileSync, statSync } from 'node:fs';
import { basename, extname, isAbsolute, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { optionsOf, type GlobalOptions } from '../context.js';
import { createUi, colorEnabled, renderTable, type Ui } from '../output.js';
import { loadSettings } from '../../settings/index.js';
import { WorkflowLoader, type WorkflowCheck } from '../../workflow/loader.js';
import { findWorkflow, listWorkflowFiles } from '../../workflow/lookup.js';
import { formatIssue } from '../../workflow/validate.js';
import { stepCommand, timeoutText, workflowDetail, workflowListItem } from '../../workflow/detail.js';
import { workflowVariables } from '../../workflow/variables.js';
import type { Workflow, WorkflowIssue } from '../../workflow/types.js';

interface Ctx {
  o: GlobalOptions;
  ui: Ui;
  color: boolean;
  dir: string;
  loader: WorkflowLoader;
}

function context(command: Command): Ctx {
  const o = optionsOf(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const loaded = loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  if (o.verbose || o.debug) for (const w of loaded.warnings) ui.err(`⚠ ${w}`);
  const dir = loaded.paths.workflows;
  return { o, ui, color: colorEnabled(o.disableColor), dir, loader: new WorkflowLoader(dir) };
}

/** Paths in messages: relative to the current folder when inside it. */
function shown(file: string): string {
  if (!file) return file;
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

function firstLine(text: string, max = 80): string {
  const line = text.split('\n')[0] ?? '';
  const more = text.includes('\n') ? ' …' : '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : `${line}${more}`;
}

function splitList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
}

/** `osm workflow list [search]`: table of workflows and a total line, or a JSON array with --json. */
export async function workflowList(command: Command, search?: string): Promise<void> {
  const ctx = context(command);
  const opts = optionsOf<{ tags?: string; all?: boolean; search?: string; showTags?: boolean; usage?: boolean }>(command);
  const wanted = splitList(opts.tags);
  const needle = (search ?? opts.search)?.trim().toLowerCase() ?? '';
  const workflows: Workflow[] = [];
  const broken: string[] = [];
  for (const file of listWorkflowFiles(ctx.dir)) {
    const check = ctx.loader.check(file);
    if (!check.workflow) {
      broken.push(shown(file));
      continue;
    }
    const wf = check.workflow;
    if (wf.hidden && !opts.all) continue;
    if (needle && !wf.name.toLowerCase().includes(needle) && !wf.description.toLowerCase().includes(needle)) continue;
    if (wanted.length && !wf.tags.some((t) => wanted.includes(t.toLowerCase()))) continue;
    workflows.push(wf);
  }
  if (ctx.o.json) {
    ctx.ui.json(workflows.map((wf) => workflowListItem(wf, ctx.loader.stepCount(wf))));
  } else {
    const rows = workflows.map((wf) => [
      wf.name, wf.kind, ctx.loader.stepCount(wf), wf.tags.join(', '), firstLine(wf.description, 60),
    ]);
    if (rows.length) ctx.ui.out(await renderTable(['Name', 'Kind', 'Steps', 'Tags', 'Description'], rows, { color: ctx.color }));
    if (opts.usage) {
      for (const wf of workflows) ctx.ui.out(`  osm run ${wf.kind === 'flow' ? '-f' : '-m'} ${wf.name} -t <target>${wf.params.filter((p) => p.required).map((p) => ` -p ${p.name}=<value>`).join('')}`);
    }
    if (opts.showTags) {
      const counts = new Map<string, number>();
      for (const wf of workflows) for (const t of wf.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
      const tags = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      ctx.ui.out(`Tags: ${tags.length ? tags.map(([t, n]) => `${t} (${n})`).join(', ') : '(none)'}`);
    }
    const flows = workflows.filter((w) => w.kind === 'flow').length;
    ctx.ui.info(`Total: ${workflows.length} workflows (${flows} flows, ${workflows.length - flows} modules)`);
    if (!rows.length) ctx.ui.err(`no workflows found in ${ctx.dir}${needle || wanted.length ? ' matching the filter' : ''}`);
  }
  if (broken.length) {
    ctx.ui.err(`⚠ ${broken.length} workflow file(s) could not be parsed: ${broken.join(', ')} (run 'osm workflow validate ${shown(ctx.dir)}')`);
  }
}

/** `osm workflow show NAME`: sections, `--yaml` raw file, or the detail object with --json. */
export async function workflowShow(command: Command, name: string): Promise<void> {
  const ctx = context(command);
  const opts = optionsOf<{ yaml?: boolean; target?: string; params?: string[] }>(command);
  const file = findWorkflow(name, ctx.dir);
  if (opts.target !== undefined && !opts.yaml) {
    // The plan: what a run against this target would execute (nothing runs).
    const { openAppContext } = await import('../../services/context.js');
    const { buildRunPlan } = await import('../../services/plan.js');
    const { formatPlan } = await import('../../workflow/plan.js');
    const { parseParamPairs } = await import('../../workflow/params.js');
    const app = await openAppContext({ baseFolder: ctx.o.baseFolder, settingsFile: ctx.o.settingsFile, workflowFolder: ctx.o.workflowFolder });
    try {
      const plan = buildRunPlan(app, file, opts.target, parseParamPairs(opts.params ?? []));
      if (ctx.o.json) ctx.ui.json(plan);
      else process.stdout.write(`${formatPlan(plan)}\n`);
    } finally {
      await app.close();
    }
    return;
  }
  if (opts.yaml) {
    // Exactly the bytes on disk: users compare it with their file and expect extends/override as written.
    process.stdout.write(readFileSync(file));
    return;
  }
  const wf = ctx.loader.loadFile(file);
  const stepCount = ctx.loader.stepCount(wf);
  const verbose = Boolean(ctx.o.verbose || ctx.o.debug);
  if (ctx.o.json) {
    ctx.ui.json(verbose ? { ...workflowDetail(wf, stepCount), variables: workflowVariables(wf) } : workflowDetail(wf, stepCount));
    return;
  }
  const { ui, color } = ctx;
  const h = (title: string) => ui.out(ui.chalk.bold(title));
  const kv = (k: string, v: string) => ui.out(`  ${`${k}:`.padEnd(13)} ${v}`);
  h('Metadata:');
  kv('Name', wf.name);
  kv('Kind', wf.kind);
  kv('File', shown(wf.file_path));
  kv('Description', wf.description || '-');
  kv('Tags', wf.tags.join(', ') || '-');
  if (wf.extends) kv('Extends', wf.extends);
  kv(wf.kind === 'flow' ? 'Modules' : 'Steps', String(wf.kind === 'flow' ? wf.modules.length : wf.steps.length));
  kv('Checksum', wf.checksum);
  if (wf.hidden) kv('Hidden', 'true');

  h('Params:');
  if (wf.params.length) {
    ui.out(await renderTable(['Name', 'Type', 'Required', 'Default', 'Generator'],
      wf.params.map((p) => [p.name, p.type, p.required ? 'yes' : 'no', firstLine(String(p.default ?? ''), 50), p.generator ?? '']), { color }));
  } else ui.out('  (none)');

  if (wf.kind === 'module') {
    h('Steps:');
    ui.out(await renderTable(['#', 'Name', 'Type', 'Command', 'Timeout'],
      wf.steps.map((s, i) => [i + 1, s.name, s.type, firstLine(stepCommand(s), 70), timeoutText(s.timeout)]), { color }));
  } else {
    h('Modules:');
    ui.out(await renderTable(['#', 'Name', 'Path', 'Depends on', 'Condition'],
      wf.modules.map((m, i) => [i + 1, m.name, m.steps?.length ? `(inline, ${m.steps.length} steps)` : m.path ?? '', (m.depends_on ?? []).join(', '), m.condition ?? '']), { color }));
  }

  h('Triggers:');
  if (wf.triggers.length) {
    ui.out(await renderTable(['Name', 'On', 'Schedule / topic', 'Enabled'],
      wf.triggers.map((t) => [t.name, t.on, t.schedule ?? t.event?.topic ?? t.path ?? '', t.enabled ? 'yes' : 'no']), { color }));
  } else ui.out('  (none)');

  const deps = wf.dependencies;
  if (deps.commands.length || deps.files.length || deps.target_types.length) {
    h('Dependencies:');
    if (deps.commands.length) kv('Commands', deps.commands.join(', '));
    if (deps.files.length) kv('Files', deps.files.join(', '));
    if (deps.target_types.length) kv('Target types', deps.target_types.join(', '));
  }

  if (verbose) {
    h('Variables:');
    const vars = workflowVariables(wf);
    if (vars.length) ui.out(await renderTable(['Name', 'Source', 'Description'], vars.map((v) => [v.name, v.source, v.description]), { color }));
    else ui.out('  (none)');
  }
}

interface ValidateFlags {
  disable?: string;
  severity?: string;
  format?: string;
  failFast?: boolean;
}

interface FileReport {
  file: string;
  name: string;
  kind: string;
  valid: boolean;
  errors: number;
  warnings: number;
  issues: (WorkflowIssue & { text: string })[];
}

const CORE_RULES = new Set(['yaml', 'schema', 'read', 'extends', 'validate', 'module-path']);
const SEVERITY_RANK: Record<string, number> = { info: 0, warning: 1, error: 2 };

function report(check: WorkflowCheck, flags: ValidateFlags): FileReport {
  const disabled = new Set(splitList(flags.disable));
  const floor = SEVERITY_RANK[(flags.severity ?? 'info').toLowerCase()] ?? 0;
  // Parser and validator findings make the file unusable, so they cannot be disabled; lint rules can.
  const kept = check.issues.filter((i) => !(i.rule && !CORE_RULES.has(i.rule) && disabled.has(i.rule.toLowerCase())));
  const issues = kept
    .map((i) => ({ ...i, file: shown(i.file) }))
    .sort((a, b) => (a.file === b.file ? (a.line ?? 0) - (b.line ?? 0) : a.file.localeCompare(b.file)))
    .map((i) => ({ ...i, text: formatIssue(i) }));
  const errors = issues.filter((i) => i.severity === 'error').length;
  return {
    file: shown(check.file),
    name: check.workflow?.name ?? basename(check.file, extname(check.file)),
    kind: check.workflow?.kind ?? 'unknown',
    valid: errors === 0,
    errors,
    warnings: issues.filter((i) => i.severity === 'warning').length,
    issues: issues.filter((i) => (SEVERITY_RANK[i.severity] ?? 0) >= floor),
  };
}

function printReport(ui: Ui, r: FileReport): void {
  for (const i of r.issues) {
    const icon = i.severity === 'error' ? ui.chalk.red('✘') : i.severity === 'warning' ? ui.chalk.yellow('⚠') : ui.chalk.cyan('ℹ');
    ui.out(`${icon} ${i.severity}: ${i.text}${i.rule ? ui.chalk.gray(` [${i.rule}]`) : ''}`);
  }
  const warn = r.warnings ? ` (${plural(r.warnings, 'warning')})` : '';
  // The verdict is part of the report (stdout); the exit code carries the failure.
  if (r.valid) ui.out(`${ui.chalk.green('✔')} Workflow '${r.name}' (${r.kind}) passed all lint checks${warn}`);
  else ui.out(`${ui.chalk.red('✘')} Workflow '${r.name}' (${r.kind}) failed validation: ${plural(r.errors, 'error')}${warn}`);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `osm workflow validate NAME|FILE|DIR`: every error and warning; exit code 1 when any error. */
export async function workflowValidate(command: Command, target: string): Promise<void> {
  const ctx = context(command);
  const flags = optionsOf<ValidateFlags>(command);
  const asDir = isDirectory(resolve(target)) ? resolve(target) : undefined;
  const files = asDir ? listWorkflowFiles(asDir) : [findWorkflow(target, ctx.dir)];
  const format = (flags.format ?? 'pretty').toLowerCase();
  if (!['pretty', 'json', 'github'].includes(format)) throw errors.validation(`--format must be pretty, json or github, got ${JSON.stringify(flags.format)}`);
  const reports: FileReport[] = [];
  for (const f of files) {
    const r = report(ctx.loader.check(f, true), flags);
    reports.push(r);
    if (flags.failFast && !r.valid) break;
  }
  const failed = reports.filter((r) => !r.valid).length;
  if (failed > 0) process.exitCode = 1;

  if (format === 'github') {
    // GitHub Actions workflow commands: one annotation per issue, then the verdicts.
    const esc = (t: string) => t.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
    for (const r of reports) {
      for (const i of r.issues) {
        const level = i.severity === 'error' ? 'error' : i.severity === 'warning' ? 'warning' : 'notice';
        ctx.ui.out(`::${level} file=${esc(i.file)}${i.line ? `,line=${i.line}` : ''},title=${esc(i.rule ?? 'osm')}::${esc(i.path ? `${i.path}: ${i.message}` : i.message)}`);
      }
    }
    ctx.ui.out(`${reports.length - failed} passed, ${failed} failed`);
    return;
  }
  if (ctx.o.json || format === 'json') {
    if (asDir) {
      ctx.ui.json({ folder: shown(asDir), total: reports.length, passed: reports.length - failed, failed, results: reports });
    } else {
      ctx.ui.json(reports[0]);
    }
    return;
  }
  for (const r of reports) printReport(ctx.ui, r);
  if (asDir) {
    const errors = reports.reduce((n, r) => n + r.errors, 0);
    const warnings = reports.reduce((n, r) => n + r.warnings, 0);
    ctx.ui.out(`${ctx.ui.chalk.cyan('◆')} Validated ${plural(reports.length, 'workflow')} in ${shown(asDir)}: ${reports.length - failed} passed, ${failed} failed (${plural(errors, 'error')}, ${plural(warnings, 'warning')})`);
  }
}
