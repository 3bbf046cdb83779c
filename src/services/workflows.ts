/**
 * Workflow use cases of the HTTP API (and anything else that needs them): the index listing, tags,
 * refresh, lookup by name (confined to the workflows folder) and upload of a new workflow file.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { errors, isOsmError } from '../errors.js';
import type { WorkflowRow } from '../store/index.js';
import { indexWorkflows, workflowRow, type IndexResult } from '../workflow/indexer.js';
import { findWorkflow, listWorkflowFiles } from '../workflow/lookup.js';
import { workflowDetail, workflowListItem, type WorkflowDetail, type WorkflowListItem } from '../workflow/detail.js';
import { parseWorkflowText } from '../workflow/parse.js';
import { formatIssue } from '../workflow/wf-issues.js';
import { isInside, sanitizeName } from '../util/fs-safe.js';
import type { Workflow } from '../workflow/types.js';
import type { AppContext } from './context.js';

/** A workflow listing item as the API shows it (spec "Workflow (listing item)"). */
export interface WorkflowApiItem extends WorkflowListItem {
  indexed_at: string | null;
}

export interface WorkflowListQuery {
  source: 'db' | 'filesystem';
  kind?: 'flow' | 'module';
  tags?: string[];
  search?: string;
  offset: number;
  limit: number;
}

/** Exactly the spec's fields of an index row. */
function rowToItem(row: WorkflowRow): WorkflowApiItem {
  return {
    name: row.name,
    kind: row.kind as WorkflowApiItem['kind'],
    description: row.description,
    tags: row.tags,
    file_path: row.file_path,
    params: row.params.map((p) => ({ name: p.name, required: p.required, default: p.default, generator: p.generator })),
    required_params: row.required_params,
    step_count: row.step_count,
    module_count: row.module_count,
    checksum: row.checksum,
    indexed_at: row.indexed_at,
  };
}

/** Indexes the workflows folder when the index holds no row at all (first use of a fresh database). */
export async function ensureIndexed(app: AppContext): Promise<void> {
  const any = await app.repos.workflows.list({ includeHidden: true }, { offset: 0, limit: 1 });
  if (any.total === 0) await indexWorkflows(app.repos, app.settings().paths.workflows, { loader: app.loader });
}

/** GET /workflows: the index (default) or a fresh parse of the folder, filtered and paginated by name. */
export async function listWorkflows(app: AppContext, q: WorkflowListQuery): Promise<{ data: WorkflowApiItem[]; total: number }> {
  const tags = (q.tags ?? []).map((t) => t.trim()).filter(Boolean);
  if (q.source === 'db') {
    await ensureIndexed(app);
    const page = await app.repos.workflows.list({ kind: q.kind, search: q.search || undefined, tags }, { offset: q.offset, limit: q.limit });
    return { data: page.data.map(rowToItem), total: page.total };
  }
  const needle = (q.search ?? '').toLowerCase();
  const items: WorkflowApiItem[] = [];
  for (const file of listWorkflowFiles(app.settings().paths.workflows)) {
    let wf: Workflow;
    try {
      wf = app.loader.loadFile(file);
    } catch {
      continue; // broken files are reported by refresh/validate, not by a listing
    }
    if (wf.hidden) continue;
    if (q.kind && wf.kind !== q.kind) continue;
    if (tags.length && !wf.tags.some((t) => tags.includes(t))) continue;
    if (needle && !wf.name.toLowerCase().includes(needle) && !wf.description.toLowerCase().includes(needle)) continue;
    const row = await app.repos.workflows.get(wf.name);
    const indexed = row && row.checksum === wf.checksum && row.file_path === wf.file_path ? row.indexed_at : null;
    items.push({ ...workflowListItem(wf, app.loader.stepCount(wf)), indexed_at: indexed });
  }
  items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { data: items.slice(q.offset, q.offset + q.limit), total: items.length };
}

/** GET /workflows/tags. */
export async function workflowTags(app: AppContext): Promise<{ tags: string[]; count: number }> {
  await ensureIndexed(app);
  const tags = await app.repos.workflows.tags();
  return { tags, count: tags.length };
}

/** POST /workflows/refresh: re-index the folder (rows whose checksum did not change are left alone unless forced). */
export async function refreshWorkflows(app: AppContext, force: boolean): Promise<IndexResult> {
  return indexWorkflows(app.repos, app.settings().paths.workflows, { force, loader: app.loader });
}

/** Rejects names that could address a file outside the workflows folder. */
export function assertWorkflowName(name: string): void {
  if (typeof name !== 'string' || name.trim() === '' || /[/\\\0]/.test(name) || name.includes('..')) throw errors.invalidWorkflowName();
}

/** The file under `dir` whose workflow declares `name` (files that fail to load are skipped). */
function byDeclaredName(app: AppContext, dir: string, name: string): string | undefined {
  for (const file of listWorkflowFiles(dir)) {
    try {
      if (app.loader.loadFile(file).name === name) return file;
    } catch {
      // not a loadable workflow: not this one
    }
  }
  return undefined;
}

/**
 * The file of a workflow named by the API: looked up by name inside the workflows folder only
 * (never as a path relative to the daemon's working directory), then through the index.
 */
export function resolveWorkflowFile(app: AppContext, name: string): string {
  assertWorkflowName(name);
  const dir = resolve(app.settings().paths.workflows);
  const stem = name.trim().replace(/\.ya?ml$/i, '');
  // A name resolved a moment ago (a task is routed, checked and run: three lookups) is that file
  // while it exists, for up to a second. A miss is never remembered: a workflow added since is
  // found at once (one added that would take precedence over the remembered file, within a second).
  const key = `${dir}\0${stem}`;
  const memo = resolved.get(key);
  if (memo && Date.now() - memo.at < RESOLVED_TTL_MS && existsSync(memo.file)) return memo.file;
  const remember = (file: string) => {
    if (resolved.size >= 512) resolved.clear();
    resolved.set(key, { file, at: Date.now() });
    return file;
  };
  try {
    const file = findWorkflow(stem, dir);
    if (isInside(dir, resolve(file))) return remember(file);
  } catch (err) {
    if (!isOsmError(err) || err.code !== 'OSM_ERR_WORKFLOW_NOT_FOUND') throw err;
  }
  // A workflow whose declared name differs from its file name. Run creation and distributed
  // routing resolve synchronously: the SQLite index answers at once; without it (PostgreSQL, whose
  // index rows may come from another machine's folder) the folder's own files are read.
  const file = app.store ? app.store.workflows.get(stem)?.file_path : byDeclaredName(app, dir, stem);
  if (file && isInside(dir, resolve(file)) && existsSync(file)) return remember(file);
  throw errors.apiWorkflowNotFound();
}

/** Names resolved in the last RESOLVED_TTL_MS, per workflows folder. */
const resolved = new Map<string, { file: string; at: number }>();
const RESOLVED_TTL_MS = 1000;

/** GET /workflows/{name}: the raw YAML text. */
export function workflowSource(app: AppContext, name: string): string {
  return readFileSync(resolveWorkflowFile(app, name), 'utf8');
}

/** GET /workflows/{name}?json=true: the detail object. */
export async function workflowDetailOf(app: AppContext, name: string): Promise<WorkflowDetail> {
  const wf = app.loader.loadFile(resolveWorkflowFile(app, name));
  const detail = workflowDetail(wf, app.loader.stepCount(wf));
  // The listing fields include indexed_at (from the index); a file not indexed yet has ''.
  const row = await app.repos.workflows.get(wf.name);
  return { ...detail, indexed_at: row?.indexed_at ?? '' };
}

export interface WorkflowUploadInput {
  filename: string;
  content: Buffer;
  force: boolean;
}

export interface WorkflowUploadResult {
  name: string;
  kind: string;
  description: string;
  path: string;
}

/** Only the first line of each issue's message, without the temp file name. */
function issuesText(issues: { severity: string }[], tmpFile: string, shownName: string): string {
  return issues
    .filter((i) => i.severity === 'error')
    .map((i) => formatIssue(i as never).split(tmpFile).join(shownName))
    .join('; ');
}

/**
 * POST /workflow-upload: parses and validates the YAML BEFORE anything is saved, then writes it
 * (sanitised basename) into `flows/` or `modules/` by kind and indexes it. The file is checked as
 * a hidden temp file in its final folder, so `extends` resolves exactly as it will later.
 */
export async function uploadWorkflow(app: AppContext, input: WorkflowUploadInput): Promise<WorkflowUploadResult> {
  const original = basename(String(input.filename ?? '').replace(/\\/g, '/'));
  if (!/\.ya?ml$/i.test(original)) throw errors.workflowUploadExtension();
  const fileName = sanitizeName(original);
  if (!/\.ya?ml$/i.test(fileName)) throw errors.workflowUploadExtension();
  const text = input.content.toString('utf8');
  const parsed = parseWorkflowText(text, fileName);
  const yamlIssues = parsed.issues.filter((i) => i.severity === 'error' && i.rule === 'yaml');
  if (yamlIssues.length) throw errors.workflowUploadYaml(yamlIssues.map(formatIssue).join('; '));
  if (!parsed.workflow) throw errors.workflowUploadInvalid(issuesText(parsed.issues, fileName, fileName) || 'not a workflow');

  const root = resolve(app.settings().paths.workflows);
  const folder = join(root, parsed.workflow.kind === 'flow' ? 'flows' : 'modules');
  const dest = join(folder, fileName);
  if (!isInside(root, dest)) throw errors.invalidWorkflowName();
  if (existsSync(dest) && !input.force) throw errors.workflowFileExists(fileName);
  mkdirSync(folder, { recursive: true });
  // A dot-named temp file is skipped by the folder walk, so a half-checked upload is never listed.
  const tmp = join(folder, `.upload-${randomBytes(6).toString('hex')}.yaml`);
  writeFileSync(tmp, text, { mode: 0o644 });
  let wf: Workflow;
  try {
    const check = app.loader.check(tmp);
    const problems = check.issues.filter((i) => i.severity === 'error');
    if (problems.length || !check.workflow) throw errors.workflowUploadInvalid(issuesText(problems, tmp, fileName) || 'invalid workflow');
    const taken = await app.repos.workflows.get(check.workflow.name);
    if (taken && resolve(taken.file_path) !== dest && existsSync(taken.file_path)) {
      throw errors.workflowNameTaken(check.workflow.name, taken.file_path);
    }
    renameSync(tmp, dest);
    wf = app.loader.loadFile(dest);
  } finally {
    rmSync(tmp, { force: true });
  }
  await app.repos.workflows.upsert(workflowRow(wf, app.loader.stepCount(wf), new Date().toISOString()));
  return { name: wf.name, kind: wf.kind, description: wf.description, path: dest };
}
