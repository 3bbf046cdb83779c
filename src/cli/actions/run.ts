import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { errors, isOsmError, messageOf } from '../../errors.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled } from '../output.js';
import { parseDuration } from '../../util/duration.js';
import { parseParamPairs, parseParamsFileText } from '../../workflow/params.js';
import type { AppContext } from '../../services/context.js';
import { commandOrg, openApp } from '../app.js';
import { loadSettings } from '../../settings/index.js';
import { WorkflowLoader } from '../../workflow/loader.js';
import type { RunRecord } from '../../store/index.js';
import { createRuns, normaliseTargets, executeStoredRun, type RunOptions } from '../../services/runs.js';
import { chunkTargets, moduleSource, positiveInt, reshapeTargets, stdinTargets, type RunFlags } from './run-input.js';
import { abortRun, activeRuns, buildBaseEnv, type RunOutcome } from '../../engine/executor.js';
import { checkStaticDependencies } from '../../engine/deps-check.js';
import { missingToolLines, templateIssueLines } from './dry-run-tools.js';
import type { Preferences } from '../../workflow/types.js';
import { mapLimit } from '../../engine/pool.js';
import { planRuns } from '../../services/plan.js';
import { resumeRun } from '../../services/run-reuse.js';
import { assertInstalledWorkflow } from '../../services/installed-workflow.js';
import type { Workflow } from '../../workflow/types.js';
import { registerWebhookRuns, webhookTriggerPath, webhookTriggersEnabled } from '../../services/webhook-runs.js';
import { jsonEventListener } from '../run-events.js';
import { assertTargetsInScope, scopeFileSpec } from '../../services/scope.js';
import { analyzeTarget } from '../../workflow/heuristics.js';

/** `osm run`: collect targets and params, create run rows, execute them (or submit to a daemon). */
export async function runAction(command: Command): Promise<void> {
  try {
    await runCommand(command);
  } catch (err) {
    // An out-of-scope target or a bad --scope-file is a usage error: exit code 2 (docs/scope.md),
    // and so is a daemon's 400 to a run sent with --server (the same validation, done remotely).
    if (isOsmError(err) && (err.code === 'OSM_ERR_OUT_OF_SCOPE' || (err.code === 'OSM_ERR_VALIDATION' && /^invalid scope/.test(err.message)))) process.exitCode = 2;
    else if (!isOsmError(err) && (err as { status?: unknown }).status === 400) process.exitCode = 2;
    throw err;
  }
}

async function runCommand(command: Command): Promise<void> {
  const o = optionsOf<RunFlags>(command);
  checkWebhookFlags(o);
  // A local run uses the runtime store, SQLite-only for now (a run sent to a server or master does not).
  const remote = (!o.asWebhook && Boolean(o.server ?? o.serverUrl ?? process.env.OSM_SERVER)) || Boolean(o.distributedRun);
  if (o.resume) return resumeAction(o);
  if (o.queueRun) return queueRunAction(o);
  if (o.flow && o.module?.length) throw errors.validation('use either -f/--flow or -m/--module, not both');
  const fetched = await moduleSource(o);
  const workflows = fetched ? [fetched] : o.module?.length ? o.module : [o.flow ?? 'general'];
  if (!fetched && !o.flow && !o.module?.length) process.stderr.write('⚠ no -f/--flow or -m/--module given: using flow "general"\n');
  if (o.progressBar) o.silent = true;
  // The reference's CI mode: machine-readable output, nothing else.
  if (o.ciOutputFormat) {
    o.json = true;
    o.silent = true;
  }

  let params: Record<string, string> = {};
  if (o.paramsFile) params = parseParamsFileText(readFileSync(o.paramsFile, 'utf8'), o.paramsFile);
  params = { ...params, ...parseParamPairs(o.params ?? []) };

  // Workflow preferences act as defaults for flags the user did not give (reference §1.7); the
  // workflow is read before target collection so `empty_target: true` works without -t.
  // --as-webhook registers in this base folder's database (a server URL from the environment is not for it).
  let server = o.asWebhook ? undefined : (o.server ?? o.serverUrl ?? process.env.OSM_SERVER);
  let apiKey = o.apiKey ?? process.env.OSM_API_KEY;
  if (o.redisUrl !== undefined && !o.distributedRun) throw errors.validation('--redis-url goes with -D/--distributed-run');
  if (o.distributedRun) {
    if (o.asWebhook || o.queue || o.queueRun || o.dryRun || o.asCron !== undefined || o.resume !== undefined) {
      throw errors.validation('-D/--distributed-run submits runs to the master: it does not combine with --as-webhook, --queue, --queue-run, --dry-run, --as-cron or --resume');
    }
    if (o.redisUrl !== undefined && !o.json) process.stderr.write("⚠ --redis-url is not used: osm submits through the master's API and the master uses its own Redis queue\n");
    ({ server, apiKey } = distributedTarget(o, server, apiKey));
  }
  if (!server) applyPreferences(command, o, workflows);

  let targets = [...(o.target ?? [])];
  if (o.targetFile) targets.push(...readFileSync(o.targetFile, 'utf8').split(/\r?\n/));
  if (targets.length === 0 && !o.stdModule) targets.push(...stdinTargets());
  targets = normaliseTargets(targets);
  targets = reshapeTargets(targets, o);
  const chunk = chunkTargets(targets, o);
  if (chunk === 'printed') return;
  targets = chunk;
  if (targets.length === 0) {
    if (!o.emptyTarget) throw errors.validation('no targets specified. Use -t, -T, pipe targets via stdin, or use --empty-target');
    targets = [`empty-${randomBytes(3).toString('hex')}-${Math.floor(Date.now() / 1000)}`];
  }
  if (o.chunkThreads !== undefined && o.chunkPart === undefined) throw errors.validation('--chunk-threads goes with --chunk-part');
  const concurrency = positiveInt(o.chunkThreads, '--chunk-threads') ?? positiveInt(o.concurrency, '--concurrency') ?? 1;
  const timeoutMs = o.timeout ? parseDuration(o.timeout) : undefined;
  const options: RunOptions = {
    targetFile: o.targetFile,
    tactic: o.tactic,
    threadsHold: positiveInt(o.threadsHold, '--threads-hold'),
    heuristics: o.heuristicsCheck,
    space: o.space ?? o.workspace,
    // Stored absolute: a queued run may execute in another process with another working directory.
    workspacesOverride: o.workspacesFolder ? resolve(o.workspacesFolder) : undefined,
    exclude: o.exclude,
    fuzzyExclude: o.fuzzyExclude,
    timeoutMs,
    skipValidation: o.skipValidation,
    emptyTarget: o.emptyTarget,
    disableWorkflowState: o.disableWorkflowState,
    disableNotification: (o as { disableNotification?: boolean }).disableNotification,
    ...(o.scopeFile ? { scope: scopeFileSpec(o.scopeFile) } : {}),
  };

  if (server) {
    const { submitToServer } = await import('./run-remote.js');
    await submitToServer(server, { workflows, kind: o.flow ? 'flow' : 'module', targets, params, concurrency, priority: o.runPriority, timeoutMs, apiKey, json: Boolean(o.json), silent: Boolean(o.silent), verbose: Boolean(o.verbose || o.debug), disableColor: o.disableColor, ...(o.distributedRun ? { runMode: 'distributed' as const } : {}), ...(options.scope ? { scope: options.scope } : {}) });
    return;
  }

  const app = await openApp(o);
  try {
    if (o.dryRun) {
      // Dependency checks still run in a dry run: a target-type mismatch or a missing tool fails it.
      const pathEnv = buildBaseEnv(app.settings().paths.binaries).PATH ?? '';
      let unrendered = 0;
      for (const wf of workflows) {
        const loaded = app.loader.load(wf);
        for (const t of targets) checkStaticDependencies(loaded, t, pathEnv, { skipValidation: o.skipValidation, emptyTarget: o.emptyTarget });
        // The target scope is checked as a real run would (exit 2 when a target is out of scope).
        if (!o.emptyTarget) await assertTargetsInScope(app, loaded, targets, options.scope, (t) => analyzeTarget(t, { level: options.heuristics ?? 'basic', space: options.space }).targetSpace);
        if (loaded.kind === 'flow') for (const line of missingToolLines(app.loader, loaded, pathEnv)) process.stdout.write(`${line}\n`);
        const tpl = templateIssueLines(app.loader, loaded);
        for (const line of tpl.lines) process.stdout.write(`${line}\n`);
        unrendered += tpl.errors;
      }
      process.stdout.write(planRuns(app, workflows, targets, params, options));
      // A placeholder that would reach a command unrendered fails that step at run time: the dry
      // run says so with the usage/validation exit code.
      if (unrendered > 0) {
        process.stderr.write(`Error: ${unrendered} unrendered [[variable]] placeholder(s) or {{ }} template error(s) in commands (see above); a run would fail those steps\n`);
        process.exitCode = 2;
      }
      return;
    }
    if (o.asCron !== undefined) {
      // The reference's way to schedule: one cron schedule per workflow and target.
      const { createSchedule } = await import('../../services/schedules.js');
      const made = [];
      for (const given of workflows) {
        // The daemon fires schedules by workflow name: a file outside the workflows folder cannot be scheduled.
        const wf = app.loader.load(given);
        assertInstalledWorkflow(app, wf, '--as-cron');
        for (const t of targets) {
          made.push(await createSchedule(app, { name: `${given}-${t}`.slice(0, 200), workflow_name: wf.name, trigger_type: 'cron', schedule: o.asCron, target: t, params }));
        }
      }
      if (o.json) process.stdout.write(`${JSON.stringify(made, null, 2)}\n`);
      else for (const m of made) process.stdout.write(`✔ schedule ${m.id} '${m.name}': ${m.workflow_name} on ${String((m.input_config as { target?: string }).target ?? '') || '(no target)'} at "${m.schedule}" (runs while 'osm serve' is up)\n`);
      return;
    }
    if (o.asWebhook) {
      await registerAsWebhook(app, workflows, targets, params, options, o);
      return;
    }
    if (o.queue) {
      // The runs table is the queue: a running daemon (`osm serve`) picks these up by priority.
      // Queued runs execute later, in whatever process claims them, from the workflows folder only
      // (their rows carry no trusted path): a file elsewhere is refused here rather than failing then.
      const orgUuid = await commandOrg(app, o);
      const loaded = workflows.map((given) => {
        const wf = app.loader.load(given);
        assertInstalledWorkflow(app, wf, '--queue');
        return wf;
      });
      const created: Awaited<ReturnType<typeof createRuns>>[] = [];
      for (const wf of loaded) created.push(await createRuns(app, { workflow: wf, targets, params, options, triggerType: 'cli', status: 'queued', priority: o.runPriority }));
      const runs = await joinOrg(app, created.flatMap((c) => c.runs), orgUuid);
      if (o.json) process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
      else for (const r of runs) process.stdout.write(`◆ queued ${r.run_uuid}  ${r.workflow_name}  ${r.target}\n`);
      return;
    }
    if (o.sudoAware) sudoOnce();
    const waitMs = o.repeat ? parseDuration(o.repeatWaitTime) : 0;
    for (let round = 1; ; round++) {
      if (o.repeat && !o.json) process.stdout.write(`◆ Repeat round ${round}\n`);
      await runLocally(app, workflows, targets, params, options, concurrency, o);
      if (!o.repeat || process.exitCode === 130) break;
      if (!o.json) process.stdout.write(`◆ Next round in ${o.repeatWaitTime} (Ctrl-C to stop)\n`);
      await new Promise((r) => setTimeout(r, waitMs));
    }
  } finally {
    await app.close();
  }
}

/** --as-webhook / --webhook-auth-key: only with each other, and not with another way of running. */
function checkWebhookFlags(o: GlobalOptions & RunFlags): void {
  if (o.webhookAuthKey !== undefined && !o.asWebhook) throw errors.validation('--webhook-auth-key needs --as-webhook');
  if (!o.asWebhook) return;
  const clash = (
    [
      ['--resume', o.resume !== undefined],
      ['--queue-run', o.queueRun],
      ['--queue', o.queue],
      ['--as-cron', o.asCron !== undefined],
      ['--dry-run', o.dryRun],
      ['--repeat', o.repeat],
      ['--server', o.server !== undefined || o.serverUrl !== undefined],
    ] as const
  ).filter(([, on]) => on);
  if (clash.length) throw errors.validation(`--as-webhook registers templates instead of running: it cannot be combined with ${clash.map(([f]) => f).join(', ')}`);
}

/**
 * `osm run … --as-webhook [--webhook-auth-key K]`: one webhook run template per workflow and
 * target (validated like a run); prints each trigger path, or a JSON array with --json.
 */
async function registerAsWebhook(app: AppContext, workflows: string[], targets: string[], params: Record<string, string>, options: RunOptions, o: GlobalOptions & RunFlags): Promise<void> {
  const made = await registerWebhookRuns(app, { workflows, targets, params, options, authKey: o.webhookAuthKey });
  const rows = made.map((t) => ({ webhook_uuid: t.webhook_uuid, target: t.target, workflow: t.workflow_name, kind: t.workflow_kind, trigger_url: webhookTriggerPath(t.webhook_uuid, o.webhookAuthKey) }));
  if (o.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else {
    for (const r of rows) process.stdout.write(`✔ webhook ${r.webhook_uuid}: ${r.workflow} (${r.kind}) on ${r.target}\n  trigger: POST ${r.trigger_url}\n`);
    if (o.webhookAuthKey !== undefined) process.stdout.write('  (the key is stored as a hash: this is the only time osm shows these trigger paths with it)\n');
  }
  if (!webhookTriggersEnabled(app)) {
    process.stderr.write("⚠ server.enable_trigger_via_webhook is false: the daemon answers 404 to triggers until you run 'osm config set server.enable_trigger_via_webhook true' (applied without a restart)\n");
  }
}

/**
 * `osm run --queue-run [-c N]`: executes the runs waiting in the database queue (from
 * `osm run --queue` or the API) in this process, `-c` at a time, by priority, and exits when the
 * queue is empty — the cron-friendly counterpart of a daemon.
 */
async function queueRunAction(o: GlobalOptions & RunFlags): Promise<void> {
  if (o.chunkThreads !== undefined && o.chunkPart === undefined) throw errors.validation('--chunk-threads goes with --chunk-part');
  const concurrency = positiveInt(o.chunkThreads, '--chunk-threads') ?? positiveInt(o.concurrency, '--concurrency') ?? 1;
  const app = await openApp(o);
  const { RunQueue } = await import('../../engine/queue.js');
  const seen = new Set<string>();
  const queue = new RunQueue(app, {
    limit: () => concurrency,
    pollMs: 0,
    log: (msg, fields) => {
      if (msg === 'run started' && typeof fields?.run_uuid === 'string') seen.add(fields.run_uuid);
    },
  });
  const onSignal = () => void queue.stop();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const waiting = (await app.repos.runs.countByStatus()).queued ?? 0;
    if (!o.json) process.stdout.write(`◆ ${waiting} queued run(s); executing ${concurrency} at a time\n`);
    await queue.start();
    for (;;) {
      // Busy is read after the count: a run claimed meanwhile is in a pass or running, never in neither.
      const queued = (await app.repos.runs.countByStatus()).queued ?? 0;
      if (queued === 0 && !queue.busy()) break;
      queue.kick();
      await new Promise((r) => setTimeout(r, 200));
    }
    await queue.stop();
    const runs = (await Promise.all([...seen].map((u) => app.repos.runs.find(u)))).filter((r): r is NonNullable<typeof r> => Boolean(r));
    if (o.json) process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    else if (runs.length) printMultiSummary(runs);
    if (runs.some((r) => r.status !== 'completed')) process.exitCode = 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await app.close();
  }
}

/**
 * The global --org on a run: the runs' workspaces join that org (reference: a run that names an
 * org sets its workspace's org), with everything already recorded for them; returns the runs re-read.
 */
async function joinOrg(app: AppContext, runs: RunRecord[], orgUuid: string | undefined): Promise<RunRecord[]> {
  if (!orgUuid || runs.length === 0) return runs;
  const spaces = [...new Set(runs.map((r) => r.workspace))];
  const repos = app.repos;
  await repos.tx(async () => {
    for (const ws of spaces) if (!(await repos.workspaces.get(ws))) await repos.workspaces.upsertRunInfo({ name: ws, local_path: join(app.settings().paths.workspaces, ws) });
    await repos.orgs.assign(orgUuid, spaces);
  });
  return rereadRuns(app, runs);
}

/** The runs as stored now (each one as given when it is gone). */
async function rereadRuns(app: AppContext, runs: RunRecord[]): Promise<RunRecord[]> {
  const out: RunRecord[] = [];
  for (const r of runs) out.push((await app.repos.runs.get(r.id)) ?? r);
  return out;
}

/**
 * Where -D submits: --server/--server-url/OSM_SERVER, else the daemon of this base folder (its
 * settings' port on loopback, with its API key when the caller gave none).
 */
function distributedTarget(o: GlobalOptions, server: string | undefined, apiKey: string | undefined): { server: string; apiKey: string | undefined } {
  if (server) return { server, apiKey };
  const s = loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder }).settings.server;
  const host = !s.host || s.host === '0.0.0.0' || s.host === '::' ? '127.0.0.1' : s.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${s.port}`;
  return { server: url, apiKey: apiKey ?? (s.enabled_auth_api && s.auth_api_key ? s.auth_api_key : undefined) };
}

/** --sudo-aware: ask for the sudo password once up front (steps using sudo then do not prompt). */
function sudoOnce(): void {
  if (process.getuid?.() === 0) return;
  const r = spawnSync('sudo', ['-v'], { stdio: 'inherit' });
  if (r.status !== 0) process.stderr.write('⚠ sudo authentication failed; steps using sudo may prompt or fail\n');
}

/** `osm run --resume <run>`: a new run reusing the completed steps of a failed/cancelled one. */
async function resumeAction(o: RunFlags & { json?: boolean; silent?: boolean; disableColor?: boolean; verbose?: boolean; debug?: boolean; baseFolder?: string; settingsFile?: string; workflowFolder?: string }): Promise<void> {
  const app = await openApp(o);
  try {
    // The workflow is the installed one of the run's name, or the file the operator names with -f.
    const workflow = o.flow ? app.loader.load(o.flow) : undefined;
    let r: Awaited<ReturnType<typeof resumeRun>>;
    try {
      r = await resumeRun(app, o.resume!, { status: 'pending', ownerPid: process.pid, triggerType: 'cli', ...(workflow ? { workflow } : {}) });
    } catch (err) {
      if (isOsmError(err) && err.code === 'OSM_ERR_RUN_WORKFLOW_MISSING') throw errors.validation(`${err.message}: name its file with -f to resume the run with it`);
      throw err;
    }
    if (!o.json) {
      process.stdout.write(`◆ Resuming run ${r.original.run_uuid} (${r.original.workflow_name} on ${r.original.target}) as ${r.run.run_uuid}\n`);
      process.stdout.write(r.reused.length ? `◆ Reusing ${r.reused.length} completed step(s): ${r.reused.join(', ')}\n` : '◆ No completed steps to reuse: everything runs again\n');
    }
    const onSignal = () => abortRun(r.run.run_uuid, 'cancelled');
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let out: RunOutcome;
    try {
      out = await executeStoredRun(app, r.run, { stdout: !o.json, silent: Boolean(o.silent), color: colorEnabled(o.disableColor), verbose: Boolean(o.verbose || o.debug), spinner: wantSpinner(o), noLogLines: Boolean(o.disableLogging), ...(o.json ? { listener: jsonEventListener(r.run.run_uuid) } : {}) }, 'cli', { workflow: r.workflow });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    // JSON lines of the run's events came first; the run record is the last line.
    if (o.json) process.stdout.write(`${JSON.stringify(out.run)}\n`);
    if (out.status === 'cancelled') process.exitCode = 130;
    else if (out.status !== 'completed') process.exitCode = 1;
    else {
      const note = failedModulesNote([out]);
      if (note) {
        process.exitCode = 1;
        if (!o.json) process.stderr.write(`Error: ${note}\n`);
      }
    }
  } finally {
    await app.close();
  }
}

async function runLocally(app: AppContext, workflows: string[], targets: string[], params: Record<string, string>, options: RunOptions, concurrency: number, o: RunFlags & { json?: boolean; silent?: boolean; disableColor?: boolean; verbose?: boolean; debug?: boolean; org?: string }): Promise<void> {
  // Create every row first (validated, queued): nothing is lost if we are interrupted later.
  const orgUuid = await commandOrg(app, o);
  // The operator's own command: a workflow given as a path runs from that path, handed to the engine
  // in-process below (never through the row, which a daemon would not trust).
  const loaded: Workflow[] = workflows.map((given) => app.loader.load(given));
  const created: Awaited<ReturnType<typeof createRuns>>[] = [];
  for (const wf of loaded) created.push(await createRuns(app, { workflow: wf, targets, params, options, triggerType: 'cli', status: 'pending', ownerPid: process.pid }));
  for (const c of created) c.runs = await joinOrg(app, c.runs, orgUuid);
  const json = Boolean(o.json);
  const color = colorEnabled(o.disableColor);
  if (!json && targets.length > 1) process.stdout.write(`◆ Running against ${targets.length} targets (concurrency: ${concurrency})\n`);
  for (const c of created) if (!json && !o.silent) process.stdout.write(`✔ Workflow loaded: ${c.workflow.name} (${c.workflow.kind})\n`);

  let interrupted = false;
  // The cancellations a signal writes; awaited before the runs are read back.
  let cancelling: Promise<unknown> = Promise.resolve();
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) {
      // Second Ctrl-C: stop waiting.
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`\n⚠ ${sig} received: cancelling ${activeRuns().length} run(s)…\n`);
    for (const uuid of activeRuns()) abortRun(uuid, 'cancelled');
    // Runs not started yet must not start.
    const pending = created.flatMap((c) => c.runs);
    cancelling = Promise.all(pending.map((r) => app.repos.runs.transition(r.id, 'cancelled', { error_message: 'Cancelled by user' }))).catch((err: unknown) => process.stderr.write(`⚠ cannot record the cancellation: ${messageOf(err)}\n`));
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
        const current = (await app.repos.runs.get(run.id)) ?? run;
        if (interrupted) continue;
        const out = await executeStoredRun(
          app,
          current,
          {
            stdout: !json,
            silent: Boolean(o.silent),
            color,
            verbose: Boolean(o.verbose || o.debug),
            prefix: concurrency > 1 && targets.length > 1 ? `[${run.target}] ` : undefined,
            spinner: wantSpinner(o) && !(concurrency > 1 && targets.length > 1),
            noLogLines: Boolean(o.disableLogging),
            ...(json ? { listener: jsonEventListener(run.run_uuid) } : {}),
          },
          'cli',
          { workflow: c.workflow },
        );
        outcomes.push(out);
      }
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  await cancelling;
  const finalRuns = await rereadRuns(app, created.flatMap((c) => c.runs));
  if (json) {
    // JSON lines of every run's events came first; the run record (an array for several) is the last line.
    // A run with a target scope carries its drop counts (docs/scope.md).
    const withScope = [];
    for (const r of finalRuns) {
      const scoped = await app.repos.runs.scopeStats(r.id);
      withScope.push(scoped ? { ...r, scope: scoped } : r);
    }
    process.stdout.write(`${JSON.stringify(withScope.length === 1 ? withScope[0] : withScope)}\n`);
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
    return;
  }
  const note = failedModulesNote(outcomes);
  if (note) {
    process.exitCode = 1;
    if (!json) process.stderr.write(`Error: ${note}\n`);
  }
}

/**
 * A flow whose module failed still ends `completed` (reference semantics: a failing module does not
 * fail its flow unless an `on_error: abort` action says so), but `osm run` exits 1 for it so cron
 * jobs and CI notice. Returns the message, or undefined when every module completed or was skipped.
 */
export function failedModulesNote(outcomes: RunOutcome[]): string | undefined {
  const bad = outcomes.flatMap((o) => o.modules.filter((m) => m.status === 'failed').map((m) => `${o.run.target}: module '${m.name}' failed${m.error ? ` (${m.error})` : ''}`));
  if (bad.length === 0) return undefined;
  return `${bad.length} flow module(s) failed (the run record stays 'completed', as in the reference); ${bad.join('; ')}`;
}

function printMultiSummary(runs: { target: string; workflow_name: string; status: string; error_message: string; run_uuid: string }[]): void {
  const lines = ['', '▶ Multi-Target Summary'];
  for (const r of runs) lines.push(`  ${r.status === 'completed' ? '✔' : '⏹'} ${r.target}  ${r.workflow_name}  ${r.status}${r.error_message ? `  (${r.error_message})` : ''}`);
  const ok = runs.filter((r) => r.status === 'completed').length;
  lines.push(`  Completed: ${ok}/${runs.length}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}



/** A spinner for long steps only on an interactive terminal, never with --json or --silent (nor in CI unless --spinner). */
function wantSpinner(o: { json?: boolean; silent?: boolean; progressBar?: boolean }): boolean {
  // A terminal that reports no width (some pseudo-terminals) would make ora redraw forever.
  return !o.json && (!o.silent || Boolean(o.progressBar)) && Boolean(process.stderr.isTTY) && (process.stderr.columns ?? 0) > 0 && (!process.env.CI || process.env.OSM_SPINNER === '1') && process.env.TERM !== 'dumb';
}

/**
 * Applies the first workflow's `preferences` to the flags the user left at their defaults:
 * empty_target, silent, heuristics_check, disable_logging, disable_notifications. A workflow that
 * cannot be loaded here is reported later, where the run is created.
 */
function applyPreferences(command: Command, o: GlobalOptions & RunFlags & { disableNotification?: boolean }, workflows: string[]): void {
  let prefs: Preferences | undefined;
  try {
    // Only the workflow is read here: no database is opened for it.
    prefs = new WorkflowLoader(loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder }).paths.workflows).load(workflows[0]!).preferences;
  } catch {
    return;
  }
  if (!prefs) return;
  const given = (key: string) => {
    for (let c: Command | null = command; c; c = c.parent) {
      const src = c.getOptionValueSource(key);
      if (src && src !== 'default') return true;
    }
    return false;
  };
  if (prefs.empty_target && !given('emptyTarget')) o.emptyTarget = true;
  if (prefs.silent && !given('silent')) o.silent = true;
  if (prefs.disable_logging && !given('disableLogging')) o.disableLogging = true;
  if (prefs.disable_notifications && !given('disableNotification')) o.disableNotification = true;
  if (prefs.heuristics_check && !given('heuristicsCheck')) o.heuristicsCheck = prefs.heuristics_check;
  if (prefs.repeat && !given('repeat')) o.repeat = true;
  if (prefs.repeat_wait_time && !given('repeatWaitTime')) o.repeatWaitTime = prefs.repeat_wait_time;
}
