/**
 * Implementation of `osm schedule list|add|rm|enable|disable|trigger`, imported lazily by
 * commands/schedule.ts. Parsing and formatting only: the use cases live in services/schedules.ts
 * (the same functions the API calls). A running daemon notices changes within seconds.
 */
import type { Command } from 'commander';
import { errors } from '../../errors.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';
import type { AppContext } from '../../services/context.js';
import { openApp, withApp } from '../app.js';
import { parseParamPairs } from '../../workflow/params.js';
import {
  createSchedule,
  deleteSchedule,
  listSchedules,
  setScheduleEnabled,
  triggerSchedule,
  type ScheduleFields,
} from '../../services/schedules.js';
import type { ScheduleRecord } from '../../store/index.js';

interface ListFlags extends GlobalOptions {
  offset: string;
  limit: string;
}

interface AddFlags extends GlobalOptions {
  name: string;
  workflow: string;
  target?: string;
  params: string[];
  cron?: string;
  event?: string;
  watch?: string;
  manual?: boolean;
  workspace?: string;
  disabled?: boolean;
}


function nonNegativeInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw errors.validation(`${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

/** What the schedule fires on, in one column. */
function triggerText(s: ScheduleRecord): string {
  if (s.trigger_type === 'cron') return `cron ${s.schedule}`;
  if (s.trigger_type === 'event') return `event ${s.event_topic}`;
  if (s.trigger_type === 'watch') return `watch ${s.watch_path}`;
  return s.trigger_type;
}

/** `osm schedule list`. */
export async function scheduleList(command: Command): Promise<void> {
  const opts = optionsOf<ListFlags>(command);
  const ui = createUi(opts);
  const page = { offset: nonNegativeInt(opts.offset, '--offset'), limit: Math.max(1, nonNegativeInt(opts.limit, '--limit')) };
  const res = withApp(opts, (app) => listSchedules(app, page));
  if (opts.json) {
    ui.json({ data: res.data, pagination: { total: res.total, ...page } });
    return;
  }
  if (res.total === 0) {
    ui.info('No schedules. Create one with `osm schedule add -n <name> -w <workflow> -t <target> --cron "0 2 * * *"`.');
    return;
  }
  const rows = res.data.map((s) => [
    s.id,
    s.name,
    s.workflow_name,
    triggerText(s),
    String((s.input_config as { target?: unknown }).target ?? ''),
    s.is_enabled ? 'yes' : 'no',
    s.next_run ?? '',
    s.last_run ?? '',
    s.run_count,
  ]);
  ui.out(await renderTable(['ID', 'Name', 'Workflow', 'Trigger', 'Target', 'Enabled', 'Next run', 'Last run', 'Runs'], rows, { color: colorEnabled(opts.disableColor) }));
  if (res.total > res.data.length) ui.out(`${res.data.length} of ${res.total} shown (use --offset/--limit)`);
}

/** `osm schedule add`. */
export async function scheduleAdd(command: Command): Promise<void> {
  const opts = optionsOf<AddFlags>(command);
  const ui = createUi(opts);
  const kinds = [opts.cron !== undefined, opts.event !== undefined, opts.watch !== undefined, Boolean(opts.manual)].filter(Boolean).length;
  if (kinds > 1) throw errors.validation('use only one of --cron, --event, --watch, --manual');
  if (kinds === 0) throw errors.validation('say when the workflow runs: --cron "<expr>", --event <topic>, --watch <path> or --manual');
  const fields: ScheduleFields = {
    name: opts.name,
    workflow_name: opts.workflow,
    trigger_type: opts.cron !== undefined ? 'cron' : opts.event !== undefined ? 'event' : opts.watch !== undefined ? 'watch' : 'manual',
    ...(opts.cron !== undefined ? { schedule: opts.cron } : {}),
    ...(opts.event !== undefined ? { event_topic: opts.event } : {}),
    ...(opts.watch !== undefined ? { watch_path: opts.watch } : {}),
    ...(opts.target !== undefined ? { target: opts.target } : {}),
    ...(opts.params.length ? { params: parseParamPairs(opts.params) } : {}),
    ...(opts.workspace !== undefined ? { workspace: opts.workspace } : {}),
    enabled: !opts.disabled,
  };
  const row = withApp(opts, (app) => createSchedule(app, fields));
  if (opts.json) {
    ui.json(row);
    return;
  }
  ui.success(`Schedule ${row.name} created (${row.id}): ${triggerText(row)} → ${row.workflow_name}${row.is_enabled ? '' : ' (disabled)'}`);
  if (row.next_run) ui.out(`  next run: ${row.next_run}`);
  ui.out('  `osm serve` runs schedules; a running daemon picks this one up within seconds.');
}

/** `osm schedule rm <id>`. */
export async function scheduleRemove(command: Command, id: string): Promise<void> {
  const opts = optionsOf<GlobalOptions>(command);
  const ui = createUi(opts);
  withApp(opts, (app) => deleteSchedule(app, id));
  if (opts.json) ui.json({ message: 'Schedule deleted', id });
  else ui.success(`Schedule ${id} deleted`);
}

/** `osm schedule enable|disable <id>`. */
export async function scheduleSetEnabled(command: Command, id: string, enabled: boolean): Promise<void> {
  const opts = optionsOf<GlobalOptions>(command);
  const ui = createUi(opts);
  const row = withApp(opts, (app) => setScheduleEnabled(app, id, enabled));
  if (opts.json) {
    ui.json({ message: enabled ? 'Schedule enabled' : 'Schedule disabled', id, is_enabled: row.is_enabled, next_run: row.next_run });
    return;
  }
  ui.success(`Schedule ${row.name} (${id}) ${enabled ? 'enabled' : 'disabled'}${row.next_run ? `; next run ${row.next_run}` : ''}`);
}

/** `osm schedule trigger <id>`: queues a run now; the daemon's queue executes it. */
export async function scheduleTrigger(command: Command, id: string): Promise<void> {
  const opts = optionsOf<GlobalOptions>(command);
  const ui = createUi(opts);
  const app = openApp(opts);
  let fired: Awaited<ReturnType<typeof triggerSchedule>>;
  try {
    fired = await triggerSchedule(app, id);
  } finally {
    app.close();
  }
  const { schedule, run } = fired;
  if (opts.json) {
    ui.json({ message: 'Schedule triggered', schedule: schedule.name, workflow: schedule.workflow_name, run_uuid: run.run_uuid, status: run.status });
    return;
  }
  ui.success(`Schedule ${schedule.name} triggered: run ${run.run_uuid} (${schedule.workflow_name} on ${run.target}) is ${run.status}`);
  ui.out(`  A running \`osm serve\` executes queued runs; follow it with GET /osm/api/runs/${run.run_uuid}.`);
}
