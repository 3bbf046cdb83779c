import { createReadStream, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { stringify } from 'yaml';
import type { Workflow } from '../workflow/types.js';
import { render } from '../workflow/template.js';
import { atomicWriteFile } from '../util/fs-safe.js';
import type { ArtifactInput, AsyncStore, RunRecord } from '../store/index.js';

export const STATE_FILES = {
  executionLog: 'run-execution.log',
  consoleLog: 'run-console.log',
  completed: 'run-completed.json',
  state: 'run-state.json',
  workflow: 'run-workflow.yaml',
} as const;

/** Writes the resolved workflow re-serialised (reference §3.13), minus the raw text. */
export function writeWorkflowState(output: string, wf: Workflow): void {
  try {
    atomicWriteFile(join(output, STATE_FILES.workflow), workflowStateText(wf), undefined, { durable: false });
  } catch {
    /* not fatal */
  }
}

/** The serialised workflow, cached per workflow object (many runs of one workflow share it). */
const workflowTexts = new WeakMap<Workflow, string>();
function workflowStateText(wf: Workflow): string {
  let text = workflowTexts.get(wf);
  if (text === undefined) {
    const { raw: _raw, checksum: _c, ...rest } = wf;
    text = stringify(rest);
    workflowTexts.set(wf, text);
  }
  return text;
}

/** Removes a stale run-completed.json at run start (it marks a finished run). */
export function clearCompletedMarker(output: string): void {
  rmSync(join(output, STATE_FILES.completed), { force: true });
}

/** run-state.json and run-completed.json (same content) with the reference's field names. */
export function writeRunState(output: string, run: RunRecord, workspace: Record<string, unknown> | undefined): void {
  const state = {
    run: {
      run_uuid: run.run_uuid,
      workflow_name: run.workflow_name,
      workflow_kind: run.workflow_kind,
      target: run.target,
      params: run.params,
      status: run.status,
      workspace: run.workspace,
      started_at: run.started_at,
      completed_at: run.completed_at,
      ...(run.error_message ? { error_message: run.error_message } : {}),
      total_steps: run.total_steps,
      completed_steps: run.completed_steps,
      hooks_enabled: run.hooks_enabled,
      run_mode: run.run_mode,
      run_priority: run.priority,
    },
    workspace: {
      name: run.workspace,
      local_path: output,
      total_assets: Number(workspace?.total_assets ?? 0),
      total_subdomains: Number(workspace?.total_subdomains ?? 0),
      total_urls: Number(workspace?.total_urls ?? 0),
      total_vulns: Number(workspace?.total_vulns ?? 0),
      vuln_critical: Number(workspace?.vuln_critical ?? 0),
      vuln_high: Number(workspace?.vuln_high ?? 0),
      vuln_medium: Number(workspace?.vuln_medium ?? 0),
      vuln_low: Number(workspace?.vuln_low ?? 0),
      vuln_potential: 0,
      risk_score: Number(workspace?.risk_score ?? 0),
      last_run: workspace?.last_run ?? run.started_at,
      run_workflow: run.workflow_name,
    },
    updated_at: new Date().toISOString(),
  };
  const text = `${JSON.stringify(state, null, 2)}\n`;
  atomicWriteFile(join(output, STATE_FILES.state), text, undefined, { durable: false });
  atomicWriteFile(join(output, STATE_FILES.completed), text, undefined, { durable: false });
}

const REPORT_TYPES: Record<string, string> = {
  text: 'txt', txt: 'txt', csv: 'txt', json: 'json', jsonl: 'jsonl', yaml: 'yaml', yml: 'yaml', html: 'html',
  markdown: 'md', md: 'md', log: 'log', pdf: 'pdf', png: 'png', image: 'png', zip: 'zip', folder: 'folder', directory: 'folder',
};

/** Content type of an artifact from its declared type or its extension. */
export function contentTypeOf(path: string, declared?: string): string {
  if (declared && REPORT_TYPES[declared.toLowerCase()]) return REPORT_TYPES[declared.toLowerCase()]!;
  if (existsSync(path) && statSync(path).isDirectory()) return 'folder';
  const ext = extname(path).slice(1).toLowerCase();
  return REPORT_TYPES[ext] ?? (ext === 'txt' ? 'txt' : 'unknown');
}

/** Counts non-blank lines across chunks (a line of only spaces, tabs or CR does not count). */
class LineCounter {
  lines = 0;
  private lineHasText = false;
  push(buf: Buffer): void {
    for (let i = 0; i < buf.length; i++) {
      const b = buf[i]!;
      if (b === 10) {
        if (this.lineHasText) this.lines++;
        this.lineHasText = false;
      } else if (b !== 13 && b !== 32 && b !== 9) this.lineHasText = true;
    }
  }
  end(): number {
    if (this.lineHasText) this.lines++;
    this.lineHasText = false;
    return this.lines;
  }
}

/** Files up to this size are counted with one synchronous read (state files, small reports). */
const SMALL_FILE = 256 * 1024;

/** Size and non-empty line count of a file; large files are streamed (never loaded whole). */
export async function fileStats(path: string): Promise<{ size: number; lines: number } | undefined> {
  if (!existsSync(path)) return undefined;
  const st = statSync(path);
  if (!st.isFile()) return { size: 0, lines: 0 };
  const counter = new LineCounter();
  if (st.size <= SMALL_FILE) {
    // A few kilobytes: one read beats four thread-pool round trips of a stream (measured: the
    // artifact registration of many small runs was waiting on them).
    counter.push(readFileSync(path));
    return { size: st.size, lines: counter.end() };
  }
  await new Promise<void>((resolve, reject) => {
    createReadStream(path)
      .on('data', (chunk) => counter.push(chunk as Buffer))
      .on('end', () => resolve())
      .on('error', reject);
  });
  return { size: st.size, lines: counter.end() };
}

/** Registers the workflow's reports and the state files as artifacts of the run. */
export async function registerArtifacts(repos: AsyncStore, run: RunRecord, wf: Workflow, output: string, vars: Record<string, unknown>, opts: { reportsOnly?: boolean; reports?: boolean } = {}): Promise<string[]> {
  const paths: string[] = [];
  // Collected, then written in one go (one statement on PostgreSQL).
  const rows: ArtifactInput[] = [];
  // Reports are registered only for completed runs (reference §3.14); state files always.
  for (const rep of opts.reports === false ? [] : wf.reports) {
    let path: string;
    try {
      path = render(rep.path, vars);
    } catch {
      continue;
    }
    // A report without a path (e.g. written with `default:` instead of `path:`) names no file.
    if (path.trim() === '') continue;
    const st = await fileStats(path);
    if (!st && rep.optional) continue;
    rows.push({
      run_id: run.id,
      workspace: run.workspace,
      name: rep.name,
      artifact_path: path,
      artifact_type: 'report',
      content_type: contentTypeOf(path, rep.type),
      size_bytes: st?.size ?? 0,
      line_count: st?.lines ?? 0,
      optional: rep.optional,
      description: rep.description ?? '',
    });
    paths.push(path);
  }
  if (!opts.reportsOnly) {
    const stateNames: [string, string, string][] = [
      ['state-execution-log', STATE_FILES.executionLog, 'log'],
      ['state-console-log', STATE_FILES.consoleLog, 'log'],
      ['state-completed', STATE_FILES.completed, 'json'],
      ['state-file', STATE_FILES.state, 'json'],
      ['state-workflow', STATE_FILES.workflow, 'yaml'],
    ];
    for (const [name, file, ct] of stateNames) {
      const path = join(output, file);
      const st = await fileStats(path);
      if (!st) continue;
      rows.push({
        run_id: run.id,
        workspace: run.workspace,
        name,
        artifact_path: path,
        artifact_type: 'state_file',
        content_type: ct,
        size_bytes: st.size,
        line_count: st.lines,
        optional: false,
        description: '',
      });
      paths.push(path);
    }
  }
  await repos.artifacts.upsertMany(rows);
  return paths;
}
