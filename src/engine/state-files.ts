import { createReadStream, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { stringify } from 'yaml';
import type { Workflow } from '../workflow/types.js';
import { render } from '../workflow/template.js';
import { atomicWriteFile, atomicWriteFiles } from '../util/fs-safe.js';
import type { ArtifactInput, RunRecord } from '../store/index.js';

export const STATE_FILES = {
  executionLog: 'run-execution.log',
  consoleLog: 'run-console.log',
  completed: 'run-completed.json',
  state: 'run-state.json',
  workflow: 'run-workflow.yaml',
} as const;

/** Writes the resolved workflow re-serialised (reference §3.13), minus the raw text. */
export function writeWorkflowState(output: string, wf: Workflow): void {
  const path = join(output, STATE_FILES.workflow);
  try {
    const text = workflowStateText(wf);
    // Runs of one workflow in one workspace write the same text: a file still as this process
    // left it (same inode, size and mtime) is not written again.
    const last = writtenStates.get(path);
    if (last?.text === text && last.stamp === fileStamp(path)) return;
    atomicWriteFile(path, text, undefined, { durable: false });
    rememberState(path, text);
  } catch {
    /* not fatal */
  }
}

/** What this process last wrote at a state file path, with the file's stamp right after. */
const writtenStates = new Map<string, { text: string; stamp: string }>();

function rememberState(path: string, text: string): void {
  const stamp = fileStamp(path);
  if (!stamp) return;
  if (writtenStates.size >= 256) writtenStates.clear();
  writtenStates.set(path, { text, stamp });
}

/** Inode, size and modification time of a file ('' when it is missing). */
function fileStamp(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false, bigint: true });
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : '';
}

/**
 * The serialised workflow: per workflow object, and per content (each run may load its own copy
 * of the same workflow; YAML serialising is the slow part, JSON the cheap key).
 */
const workflowTexts = new WeakMap<Workflow, string>();
const workflowTextsByContent = new Map<string, string>();
function workflowStateText(wf: Workflow): string {
  let text = workflowTexts.get(wf);
  if (text === undefined) {
    const { raw: _raw, checksum: _c, ...rest } = wf;
    const key = JSON.stringify(rest);
    text = workflowTextsByContent.get(key);
    if (text === undefined) {
      text = stringify(rest);
      if (workflowTextsByContent.size >= 64) workflowTextsByContent.clear();
      workflowTextsByContent.set(key, text);
    }
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
  // One file under both names (hard links): the two are the same text.
  atomicWriteFiles([join(output, STATE_FILES.state), join(output, STATE_FILES.completed)], text, { durable: false });
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

/**
 * The artifact rows of the workflow's reports and of the state files of a run, with their paths:
 * written by the caller in one go (with the run's terminal write).
 */
export async function collectArtifacts(run: RunRecord, wf: Workflow, output: string, vars: Record<string, unknown>, opts: { reportsOnly?: boolean; reports?: boolean } = {}): Promise<{ rows: ArtifactInput[]; paths: string[] }> {
  const paths: string[] = [];
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
  return { rows, paths };
}
