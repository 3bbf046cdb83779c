import { callApi } from '../api-client.js';
import { formatDuration } from '../../util/duration.js';
import { colorEnabled, renderTable } from '../output.js';
import { RunPrinter } from '../../engine/printer.js';
import { followSse, type SseMessage } from '../sse-client.js';
import { writeJsonEvent } from '../run-events.js';

export interface RemoteRunInput {
  workflows: string[];
  kind: 'flow' | 'module';
  targets: string[];
  params: Record<string, string>;
  concurrency: number;
  priority: string;
  timeoutMs?: number;
  apiKey?: string;
  json: boolean;
  silent: boolean;
  verbose?: boolean;
  disableColor?: boolean;
  /** -D: the master hands the runs to its workers. */
  runMode?: 'distributed';
  /** `--scope-file`, sent as the request's `scope` (the daemon enforces it). */
  scope?: { include: string[]; exclude: string[] };
}

interface ApiRun {
  id: number;
  run_uuid: string;
  workflow_name: string;
  target: string;
  status: string;
  error_message?: string;
  started_at?: string | null;
  completed_at?: string | null;
  workspace?: string;
}

const api = callApi;

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * Shows a run executing on the daemon as a local run shows it: its log stream (GET
 * /runs/{id}/logs as Server-Sent Events) printed as it arrives — steps starting and finishing,
 * each line of tool output — or, with --json, the same JSON lines a local run prints.
 */
async function followRemoteRun(base: string, run: ApiRun, input: RemoteRunInput, prefix: string | undefined): Promise<void> {
  const printer = new RunPrinter({ stdout: !input.json, silent: input.silent, color: colorEnabled(input.disableColor), prefix, verbose: input.verbose });
  if (input.json) writeJsonEvent({ event: 'run.started', ts: new Date().toISOString(), run_uuid: run.run_uuid, workflow: run.workflow_name, target: run.target, workspace: run.workspace ?? '' });
  const onMessage = (msg: SseMessage) => {
    let d: Record<string, unknown>;
    try {
      d = JSON.parse(msg.data) as Record<string, unknown>;
    } catch {
      return;
    }
    const step = String(d.step ?? '');
    if (msg.event === 'line') {
      const stream = d.stream === 'stderr' ? 'stderr' : 'stdout';
      // A parallel-steps child's line names the child, as in a local run.
      const part = typeof d.substep === 'string' && d.substep ? d.substep : undefined;
      if (input.json) writeJsonEvent({ event: 'output', ts: String(d.ts ?? new Date().toISOString()), run_uuid: run.run_uuid, step, ...(part ? { substep: part } : {}), stream, line: String(d.line ?? '') });
      else printer.liveEvent({ kind: 'line', seq: Number(msg.id ?? 0), step, ...(part ? { part } : {}), stream, line: String(d.line ?? ''), ts: Date.parse(String(d.ts)) || Date.now() });
    } else if (msg.event === 'step') {
      const status = String(d.status ?? '');
      const exit = typeof d.exit_code === 'number' ? d.exit_code : null;
      const duration = typeof d.duration_ms === 'number' ? d.duration_ms : 0;
      if (input.json) {
        if (status === 'running') writeJsonEvent({ event: 'step.started', ts: new Date().toISOString(), run_uuid: run.run_uuid, step, type: '', module: '' });
        else writeJsonEvent({ event: 'step.finished', ts: new Date().toISOString(), run_uuid: run.run_uuid, step, status, exit_code: exit, duration_ms: duration });
        return;
      }
      if (status === 'running') printer.stepStart(step, '', [], true);
      else if (status === 'completed') printer.stepSuccess(step, '', duration, '', 1);
      else if (status === 'failed') printer.stepFailed(step, '', exit === null ? 'failed' : `command exited with code ${exit}`, []);
      else if (status === 'skipped') printer.stepSkipped(step);
    }
  };
  let status = '';
  try {
    for await (const msg of followSse(base, `osm/api/runs/${encodeURIComponent(run.run_uuid)}/logs`, input.apiKey)) {
      if (msg.event === 'end') status = /"status":"(\w+)"/.exec(msg.data)?.[1] ?? 'failed';
      else onMessage(msg);
    }
  } finally {
    printer.flushLive();
  }
  if (input.json && status) {
    const d = (await api<{ data: ApiRun }>(base, `osm/api/runs/${run.run_uuid}`, input.apiKey)).data;
    const duration = d.started_at && d.completed_at ? Date.parse(d.completed_at) - Date.parse(d.started_at) : 0;
    writeJsonEvent({ event: 'run.finished', ts: new Date().toISOString(), run_uuid: run.run_uuid, status, duration_ms: duration, ...(d.error_message ? { error: d.error_message } : {}) });
  }
}

/**
 * `osm run --server URL`: submits through `POST /osm/api/runs`, follows every run's log stream
 * (the same live output as a local run), then prints the same summary as a local run. Exit code 0
 * only when every run completed.
 */
export async function submitToServer(server: string, input: RemoteRunInput): Promise<void> {
  const base = server.endsWith('/') ? server : `${server}/`;
  const finals: ApiRun[] = [];
  for (const wf of input.workflows) {
    const body: Record<string, unknown> = {
      [input.kind]: wf,
      params: input.params,
      priority: input.priority,
      ...(input.runMode ? { run_mode: input.runMode } : { concurrency: input.concurrency }),
      ...(input.targets.length === 1 ? { target: input.targets[0] } : { targets: input.targets }),
      ...(input.timeoutMs ? { timeout: Math.max(1, Math.ceil(input.timeoutMs / 60_000)) } : {}),
      ...(input.scope ? { scope: input.scope } : {}),
    };
    const created = await api<{ job_id: string; poll_url: string }>(base, 'osm/api/runs', input.apiKey, { method: 'POST', body });
    if (!input.json && !input.silent) process.stdout.write(`◆ Submitted ${wf} to ${server} (job ${created.job_id})\n`);
    let job: { runs: ApiRun[] } = { runs: [] };
    // The job's runs exist as soon as it is accepted (queued): follow each one's output live.
    for (let i = 0; i < 20 && job.runs.length < input.targets.length; i++) {
      job = await api<{ runs: ApiRun[] }>(base, `osm/api/jobs/${created.job_id}`, input.apiKey);
      if (job.runs.length < input.targets.length) await new Promise((r) => setTimeout(r, 250));
    }
    const many = job.runs.length > 1;
    try {
      await Promise.all(job.runs.map((r) => followRemoteRun(base, r, input, many ? `[${r.target}] ` : undefined)));
    } catch (err) {
      // A daemon without the log stream (or a stream that failed): fall back to watching the job.
      if (!input.json) process.stderr.write(`⚠ live output unavailable (${(err as Error).message}); waiting for the job\n`);
    }
    for (;;) {
      job = await api<{ runs: ApiRun[] }>(base, `osm/api/jobs/${created.job_id}`, input.apiKey);
      if (job.runs.length >= input.targets.length && job.runs.every((r) => TERMINAL.has(r.status))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const r of job.runs) {
      const full = await api<{ data: ApiRun }>(base, `osm/api/runs/${r.run_uuid}`, input.apiKey);
      finals.push(full.data);
      if (input.json) continue;
      const steps = await api<{ data: { step_name: string; status: string; duration_ms: number }[] }>(base, `osm/api/runs/${r.run_uuid}/steps`, input.apiKey);
      const d = full.data;
      const duration = d.started_at && d.completed_at ? Date.parse(d.completed_at) - Date.parse(d.started_at) : 0;
      const lines = ['', '▶ Execution Summary', `  Workflow: ${d.workflow_name}`, `  Run ID: ${d.run_uuid}`, `  Target: ${d.target}`, `  Status: ${d.status}`, `  Duration: ${formatDuration(duration)}`];
      if (d.error_message) lines.push(`  ${d.status === 'completed' ? 'Note' : 'Error'}: ${d.error_message}`);
      process.stdout.write(`${lines.join('\n')}\n`);
      if (steps.data.length) {
        process.stdout.write(`\n∴ Step Results:\n${await renderTable(['Status', 'Step', 'Duration'], steps.data.map((s) => [s.status, s.step_name, formatDuration(s.duration_ms)]))}\n`);
      }
    }
  }
  if (input.json) process.stdout.write(`${JSON.stringify(finals.length === 1 ? finals[0] : finals)}\n`);
  const failed = finals.filter((r) => r.status !== 'completed');
  if (failed.length) {
    process.exitCode = 1;
    process.stderr.write(`Error: ${failed.length} of ${finals.length} run(s) did not complete; ${failed[0]!.target}: ${failed[0]!.error_message || failed[0]!.status}\n`);
  }
}
