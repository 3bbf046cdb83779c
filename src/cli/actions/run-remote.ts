import { callApi } from '../api-client.js';
import { formatDuration } from '../../util/duration.js';
import { renderTable } from '../output.js';

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
  /** -D: the master hands the runs to its workers. */
  runMode?: 'distributed';
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
}

const api = callApi;

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * `osm run --server URL`: submits through `POST /osm/api/runs`, polls the job until every run is
 * terminal, then prints the same summary as a local run. Exit code 0 only when every run completed.
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
    };
    const created = await api<{ job_id: string; poll_url: string }>(base, 'osm/api/runs', input.apiKey, { method: 'POST', body });
    if (!input.json && !input.silent) process.stdout.write(`◆ Submitted ${wf} to ${server} (job ${created.job_id})\n`);
    let job: { runs: ApiRun[] } = { runs: [] };
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
  if (input.json) process.stdout.write(`${JSON.stringify(finals.length === 1 ? finals[0] : finals, null, 2)}\n`);
  const failed = finals.filter((r) => r.status !== 'completed');
  if (failed.length) {
    process.exitCode = 1;
    process.stderr.write(`Error: ${failed.length} of ${finals.length} run(s) did not complete; ${failed[0]!.target}: ${failed[0]!.error_message || failed[0]!.status}\n`);
  }
}
