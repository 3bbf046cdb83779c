/**
 * Indexes the workflows folder into the store's `workflows` table (startup, `POST
 * /workflows/refresh`, `osm db index workflow`). Unlike the reference, a row whose checksum did
 * not change is counted as `unchanged`, not `updated`, so the numbers say what was written.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { checksumOf } from './parse.js';
import type { AsyncStore, WorkflowRow } from '../store/index.js';
import { messageOf } from '../errors.js';
import { WorkflowLoader } from './loader.js';
import { listWorkflowFiles } from './lookup.js';
import { paramItems, requiredParams } from './detail.js';
import type { Workflow } from './types.js';

export interface IndexResult {
  added: number;
  updated: number;
  removed: number;
  unchanged: number;
  /** `file: message` for files that could not be indexed. */
  errors: string[];
}

/** The row the index keeps for a workflow. */
export function workflowRow(wf: Workflow, stepCount: number, indexedAt: string): Omit<WorkflowRow, 'id'> {
  return {
    name: wf.name,
    kind: wf.kind,
    description: wf.description,
    tags: [...wf.tags],
    file_path: wf.file_path,
    params: paramItems(wf),
    required_params: requiredParams(wf),
    step_count: stepCount,
    module_count: wf.kind === 'flow' ? wf.modules.length : 0,
    hidden: wf.hidden,
    checksum: wf.checksum,
    indexed_at: indexedAt,
  };
}

/** Re-indexes every workflow file under `workflowsDir`; with `force` rows are rewritten even when unchanged. */
export async function indexWorkflows(repos: AsyncStore, workflowsDir: string, opts: { force?: boolean; loader?: WorkflowLoader } = {}): Promise<IndexResult> {
  const loader = opts.loader ?? new WorkflowLoader(workflowsDir);
  const result: IndexResult = { added: 0, updated: 0, removed: 0, unchanged: 0, errors: [] };
  const firstFile = new Map<string, string>();
  const indexedAt = new Date().toISOString();
  const shown = (file: string) => relative(workflowsDir, file) || file;

  // Unchanged files are recognised by hashing their bytes, before any YAML parsing: a restart
  // with a thousand unchanged workflows only reads and hashes them.
  const byPath = new Map<string, WorkflowRow>();
  if (!opts.force) for (const row of await repos.workflows.all()) byPath.set(row.file_path, row);

  for (const file of listWorkflowFiles(workflowsDir)) {
    const known = byPath.get(file);
    if (known && !firstFile.has(known.name)) {
      let sum = '';
      try {
        sum = checksumOf(readFileSync(file));
      } catch {
        /* unreadable: parsed below, which reports the error */
      }
      if (sum === known.checksum) {
        firstFile.set(known.name, file);
        result.unchanged++;
        continue;
      }
    }
    let wf: Workflow;
    try {
      wf = loader.loadFile(file);
    } catch (err) {
      result.errors.push(`${shown(file)}: ${messageOf(err).split('\n').join('; ')}`);
      continue;
    }
    const first = firstFile.get(wf.name);
    if (first !== undefined) {
      result.errors.push(`${shown(file)}: duplicate workflow name '${wf.name}' (already indexed from ${shown(first)})`);
      continue;
    }
    firstFile.set(wf.name, file);
    const existing = await repos.workflows.get(wf.name);
    if (!opts.force && existing && existing.checksum === wf.checksum && existing.file_path === wf.file_path) {
      result.unchanged++;
      continue;
    }
    const outcome = await repos.workflows.upsert(workflowRow(wf, loader.stepCount(wf), indexedAt));
    result[outcome]++;
  }
  result.removed = await repos.workflows.deleteNotIn([...firstFile.keys()]);
  return result;
}
