/** `osm query runs|steps`: the runs and step results the API serves, as tables or JSON. */
import type { Command } from 'commander';
import { errors } from '../../errors.js';
import { commandOrg, openApp } from '../app.js';
import { listRuns, runSteps, type RunListQuery } from '../../services/run-control.js';
import { RUN_STATUSES, type RunStatus } from '../../store/index.js';
import { formatDuration } from '../../util/duration.js';
import { optionsOf } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';
import { intFlag } from './assets.js';

interface RunsOptions {
  status?: string;
  workflow?: string;
  target?: string;
  workspace?: string;
  limit?: string;
  offset?: string;
}

async function appOf(command: Command) {
  const o = optionsOf<RunsOptions>(command);
  return { o, app: await openApp(o) };
}

/** How long a run took (or has been running), for the table. */
function elapsed(started: string | null, completed: string | null): string {
  if (!started) return '';
  const end = completed ? Date.parse(completed) : Date.now();
  const ms = end - Date.parse(started);
  return Number.isFinite(ms) && ms >= 0 ? formatDuration(ms) : '';
}

/** `osm query runs [--status s] [--workflow w] [-t target] [-w ws] [--limit n] [--offset n]`. */
export async function queryRuns(command: Command): Promise<void> {
  const { o, app } = await appOf(command);
  try {
    if (o.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(o.status)) {
      throw errors.validation(`--status must be one of ${RUN_STATUSES.join(', ')}, got '${o.status}'`);
    }
    const filter: RunListQuery = { status: o.status as RunStatus | undefined, workflow_name: o.workflow, target: o.target, workspace: o.workspace, org_uuid: await commandOrg(app, o) };
    if (o.offset !== undefined && !/^\d+$/.test(o.offset.trim())) throw errors.validation(`--offset must be a whole number, got ${JSON.stringify(o.offset)}`);
    const page = { offset: Math.min(Number(o.offset ?? 0), 1_000_000_000), limit: intFlag(o.limit, '--limit', 20) };
    const r = await listRuns(app, filter, page);
    const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
    if (o.json) {
      ui.json({ data: r.data, total: r.total, offset: page.offset, limit: page.limit });
      return;
    }
    if (r.data.length === 0) {
      ui.info('No runs found');
      return;
    }
    const rows = r.data.map((x) => [x.id, x.run_uuid, x.workflow_name, x.target, x.status, `${x.completed_steps}/${x.total_steps}`, x.started_at ?? '', elapsed(x.started_at, x.completed_at)]);
    ui.out(await renderTable(['ID', 'Run UUID', 'Workflow', 'Target', 'Status', 'Steps', 'Started', 'Took'], rows, { color: colorEnabled(o.disableColor) }));
    if (r.data.length < r.total) ui.out(`showing ${r.data.length} of ${r.total} runs (--offset/--limit for more)`);
  } finally {
    await app.close();
  }
}

/** `osm query steps <run>`: the step results of one run, in execution order. */
export async function querySteps(command: Command, run: string): Promise<void> {
  const { o, app } = await appOf(command);
  try {
    const steps = await runSteps(app, run);
    const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
    if (o.json) {
      ui.json({ data: steps });
      return;
    }
    if (steps.length === 0) {
      ui.info('This run has no step results yet');
      return;
    }
    const rows = steps.map((s) => [s.step_name, s.step_type, s.status, s.duration_ms !== null && s.duration_ms !== undefined ? formatDuration(s.duration_ms) : '', (s.error_message || s.output || '').split('\n')[0]!.slice(0, 60)]);
    ui.out(await renderTable(['Step', 'Type', 'Status', 'Took', 'Output / error'], rows, { color: colorEnabled(o.disableColor) }));
  } finally {
    await app.close();
  }
}
