import { readFileSync, fstatSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { errors } from '../../errors.js';
import { optionsOf } from '../context.js';
import { colorEnabled } from '../output.js';
import { parseDuration } from '../../util/duration.js';
import { parseParamPairs, parseParamsFileText } from '../../workflow/params.js';
import { createAppContext, type AppContext } from '../../services/context.js';
import { createRuns, normaliseTargets, executeStoredRun, type RunOptions } from '../../services/runs.js';
import { abortRun, activeRuns, type RunOutcome } from '../../engine/executor.js';
import { mapLimit } from '../../engine/pool.js';
import { planRun } from '../../services/plan.js';
import { resumeRun } from '../../services/run-control.js';

interface RunFlags {
  flow?: string;
  module?: string[];
  target?: string[];
  targetFile?: string;
  params?: string[];
  paramsFile?: string;
  concurrency: string;
  tactic: string;
  threadsHold?: string;
  exclude?: string[];
  fuzzyExclude?: string[];
  space?: string;
  workspace?: string;
  workspacesFolder?: string;
  heuristicsCheck: 'none' | 'basic' | 'advanced';
  dryRun?: boolean;
  timeout?: string;
  skipValidation?: boolean;
  emptyTarget?: boolean;
  disableWorkflowState?: boolean;
  server?: string;
  apiKey?: string;
  runPriority: 'low' | 'normal' | 'high' | 'critical';
  resume?: string;
}

/** Reads targets piped on stdin (only when stdin is a pipe or a file, never a terminal). */
function stdinTargets(): string[] {
  try {
    const st = fstatSync(0);
    if (!st.isFIFO() && !st.isFile() && !st.isSocket()) return [];
    return readFileSync(0, 'utf8').split(/\r?\n/);
  } catch {
    return [];
  }
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw errors.validation(`${flag} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

/** `osm run`: collect targets and params, create run rows, execute them (or submit to a daemon). */
export async function runAction(command: Command): Promise<void> {
  const o = optionsOf<RunFlags>(command);
  if (o.resume) return resumeAction(o);
  if (o.flow && o.module?.length) throw errors.validation('use either -f/--flow or -m/--module, not both');
  const workflows = o.module?.length ? o.module : [o.flow ?? 'general'];
  if (!o.flow && !o.module?.length) process.stderr.write('⚠ no -f/--flow or -m/--module given: using flow "general"\n');

  let params: Record<string, string> = {};
  if (o.paramsFile) params = parseParamsFileText(readFileSync(o.paramsFile, 'utf8'), o.paramsFile);
  params = { ...params, ...parseParamPairs(o.params ?? []) };

  let targets = [...(o.target ?? [])];
  if (o.targetFile) targets.push(...readFileSync(o.targetFile, 'utf8').split(/\r?\n/));
  if (targets.length === 0) targets.push(...stdinTargets());
  targets = normaliseTargets(targets);
  if (targets.length === 0) {
    if (!o.emptyTarget) throw errors.validation('no targets specified. Use -t, -T, pipe targets via stdin, or use --empty-target');
    targets = [`empty-${randomBytes(3).toString('hex')}-${Math.floor(Date.now() / 1000)}`];
  }
  const concurrency = positiveInt(o.concurrency, '--concurrency') ?? 1;
  const timeoutMs = o.timeout ? parseDuration(o.timeout) : undefined;
  const options: RunOptions = {
    targetFile: o.targetFile,
    tactic: o.tactic,
    threadsHold: positiveInt(o.threadsHold, '--threads-hold'),
    heuristics: o.heuristicsCheck,
    space: o.space ?? o.workspace,
    workspacesOverride: o.workspacesFolder,
    exclude: o.exclude,
    fuzzyExclude: o.fuzzyExclude,
    timeoutMs,
    skipValidation: o.skipValidation,
    emptyTarget: o.emptyTarget,
    disableWorkflowState: o.disableWorkflowState,
    disableNotification: (o as { disableNotification?: boolean }).disableNotification,
  };

  const server = o.server ?? process.env.OSM_SERVER;
  if (server) {
    const { submitToServer } = await import('./run-remote.js');
    await submitToServer(server, { workflows, kind: o.flow ? 'flow' : 'module', targets, params, concurrency, priority: o.runPriority, timeoutMs, apiKey: o.apiKey ?? process.env.OSM_API_KEY, json: Boolean(o.json), silent: Boolean(o.silent) });
    return;
  }

  const app = createAppContext({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  try {
    if (o.dryRun) {
      for (const wf of workflows) for (const t of targets) process.stdout.write(`${planRun(app, wf, t, params, options)}\n`);
      return;
    }
    await runLocally(app, workflows, targets, params, options, concurrency, o);
  } finally {
    app.close();
  }
}

/** `osm run --resume <run>`: a new run reusing the completed steps of a failed/cancelled one. */
async function resumeAction(o: RunFlags & { json?: boolean; silent?: boolean; disableColor?: boolean; verbose?: boolean; debug?: boolean; baseFolder?: string; settingsFile?: string; workflowFolder?: string }): Promise<void> {
  const app = createAppContext({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  try {
    const r = resumeRun(app, o.resume!, { status: 'pending', ownerPid: process.pid, triggerType: 'cli' });
    if (!o.json) {
      process.stdout.write(`◆ Resuming run ${r.original.run_uuid} (${r.original.workflow_name} on ${r.original.target}) as ${r.run.run_uuid}\n`);
      process.stdout.write(r.reused.length ? `◆ Reusing ${r.reused.length} completed step(s): ${r.reused.join(', ')}\n` : '◆ No completed steps to reuse: everything runs again\n');
    }
    const onSignal = () => abortRun(r.run.run_uuid, 'cancelled');
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let out: RunOutcome;
    try {
      out = await executeStoredRun(app, r.run, { stdout: !o.json, silent: Boolean(o.silent), color: colorEnabled(o.disableColor), verbose: Boolean(o.verbose || o.debug) }, 'cli');
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (o.json) process.stdout.write(`${JSON.stringify(out.run, null, 2)}\n`);
    if (out.status === 'cancelled') process.exitCode = 130;
    else if (out.status !== 'completed') process.exitCode = 1;
  } finally {
    app.close();
  }
}

async function runLocally(app: AppContext, workflows: string[], targets: string[], params: Record<string, string>, options: RunOptions, concurrency: number, o: RunFlags & { json?: boolean; silent?: boolean; disableColor?: boolean; verbose?: boolean; debug?: boolean }): Promise<void> {
  // Create every row first (validated, queued): nothing is lost if we are interrupted later.
  const created = workflows.map((wf) => createRuns(app, { workflow: wf, targets, params, options, triggerType: 'cli', status: 'pending', ownerPid: process.pid }));
  const json = Boolean(o.json);
  const color = colorEnabled(o.disableColor);
  if (!json && targets.length > 1) process.stdout.write(`◆ Running against ${targets.length} targets (concurrency: ${concurrency})\n`);
  for (const c of created) if (!json && !o.silent) process.stdout.write(`✔ Workflow loaded: ${c.workflow.name} (${c.workflow.kind})\n`);

  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) {
      // Second Ctrl-C: stop waiting.
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`\n⚠ ${sig} received: cancelling ${activeRuns().length} run(s)…\n`);
    for (const uuid of activeRuns()) abortRun(uuid, 'cancelled');
    // Runs not started yet must not start.
    for (const c of created) for (const r of c.runs) app.store.runs.transition(r.id, 'cancelled', { error_message: 'Cancelled by user' });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const outcomes: RunOutcome[] = [];
  try {
    // Modules run in sequence for each target; targets run with `-c` concurrency.
    await mapLimit(targets, concurrency, async (_t, ti) => {
      for (const c of created) {
        const run = c.runs[ti]!;
        if (interrupted) continue;
        const out = await executeStoredRun(
          app,
          app.store.runs.get(run.id) ?? run,
          { stdout: !json, silent: Boolean(o.silent), color, verbose: Boolean(o.verbose || o.debug), prefix: concurrency > 1 && targets.length > 1 ? `[${run.target}] ` : undefined },
          'cli',
        );
        outcomes.push(out);
      }
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const finalRuns = created.flatMap((c) => c.runs.map((r) => app.store.runs.get(r.id) ?? r));
  if (json) {
    process.stdout.write(`${JSON.stringify(finalRuns.length === 1 ? finalRuns[0] : finalRuns, null, 2)}\n`);
  } else if (finalRuns.length > 1) {
    printMultiSummary(finalRuns);
  }
  if (interrupted) {
    process.exitCode = 130;
    return;
  }
  const failed = finalRuns.filter((r) => r.status !== 'completed');
  if (failed.length) {
    process.exitCode = 1;
    const first = failed[0]!;
    if (!json) process.stderr.write(`Error: ${failed.length} of ${finalRuns.length} run(s) did not complete; ${first.target}: ${first.error_message || first.status}\n`);
  }
}

function printMultiSummary(runs: { target: string; workflow_name: string; status: string; error_message: string; run_uuid: string }[]): void {
  const lines = ['', '▶ Multi-Target Summary'];
  for (const r of runs) lines.push(`  ${r.status === 'completed' ? '✔' : '⏹'} ${r.target}  ${r.workflow_name}  ${r.status}${r.error_message ? `  (${r.error_message})` : ''}`);
  const ok = runs.filter((r) => r.status === 'completed').length;
  lines.push(`  Completed: ${ok}/${runs.length}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}


