/**
 * YAML text → normalised workflow (before inheritance), with every problem reported as an issue
 * carrying the file, the YAML path and the line.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { Workflow, WorkflowIssue } from './types.js';
import { EXTENDS_OWN_KEYS, WORKFLOW_KEYS, WorkflowSchema, type ParsedWorkflow } from './schema.js';
import { friendlyMessage } from './wf-schema-common.js';
import { attachOrigins, lineForPath, pathText } from './wf-yaml-lines.js';
import { originOf } from './wf-origin.js';

/** The reference's sniff (loader.go isWorkflowYAML): a column-0 `kind: module|flow` line. */
const KIND_LINE = /^kind:[ \t]*["']?(?:module|flow)\b["']?/m;

/** True when the text looks like a workflow file (a line `kind: module` or `kind: flow` at column 0). */
export function isWorkflowYaml(text: string): boolean {
  return KIND_LINE.test(text);
}

/** `sha256:<hex>` of the raw bytes (a string counts as its UTF-8 bytes). */
export function checksumOf(data: string | Uint8Array): string {
  const hash = createHash('sha256');
  if (typeof data === 'string') hash.update(data, 'utf8');
  else hash.update(data);
  return `sha256:${hash.digest('hex')}`;
}

/** The message of a yaml error without the position suffix and the code excerpt (we add the line ourselves). */
function yamlMessage(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').trim();
}

// Keys only Osmedeus v4 workflows have (v4 had no `kind:`; flows listed `routines`, steps ran `scripts`).
const V4_TOP_KEYS = ['routines', 'desc', 'validator', 'report', 'local_pre_run', 'pre_run', 'post_run', 'usage'];
const V4_STEP_KEYS = ['scripts', 'source', 'ose', 'label', 'required', 'rcommands', 'conditions', 'rscripts'];

/** v4 markers of a parsed document without `kind` (empty when it has a kind or none are found). */
function v4Markers(data: unknown): string[] {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return [];
  const doc = data as Record<string, unknown>;
  if (doc.kind !== undefined && doc.kind !== null) return [];
  const found = V4_TOP_KEYS.filter((k) => k in doc);
  const steps = Array.isArray(doc.steps) ? doc.steps : [];
  const stepKeys = new Set<string>();
  for (const st of steps) if (st && typeof st === 'object') for (const k of Object.keys(st)) if (V4_STEP_KEYS.includes(k)) stepKeys.add(k);
  if (stepKeys.size > 0) found.push(`steps with ${[...stepKeys].join('/')}`);
  const params = Array.isArray(doc.params) ? doc.params : [];
  if (params.length > 0 && params.every((p) => p && typeof p === 'object' && !('name' in p))) found.push('params as key: value pairs');
  return found;
}

function v4Key(data: unknown): string {
  const doc = data as Record<string, unknown>;
  return V4_TOP_KEYS.find((k) => k in doc) ?? (Array.isArray(doc.steps) ? 'steps' : 'params');
}

/** Parses workflow YAML text; `file` names the source in issues. Never throws. */
export function parseWorkflowText(text: string, file: string): { workflow?: Workflow; issues: WorkflowIssue[] } {
  const issues: WorkflowIssue[] = [];
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true });
  for (const [list, severity] of [[doc.errors, 'error'], [doc.warnings, 'warning']] as const) {
    for (const e of list) {
      const issue: WorkflowIssue = { severity, file, path: '', message: `YAML: ${yamlMessage(e.message)}`, rule: 'yaml' };
      const line = e.linePos?.[0]?.line;
      if (line !== undefined) issue.line = line;
      issues.push(issue);
    }
  }
  if (doc.errors.length > 0) return { issues };

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    issues.push({ severity: 'error', file, path: '', message: `YAML: ${err instanceof Error ? err.message : String(err)}`, rule: 'yaml' });
    return { issues };
  }
  if (data === null || data === undefined) {
    issues.push({ severity: 'error', file, path: '', message: 'the file is empty', rule: 'schema' });
    return { issues };
  }

  const v4 = v4Markers(data);
  if (v4.length > 0) {
    const message = `no 'kind:' — this looks like an Osmedeus v4 workflow (${v4.join(', ')}); osm runs v5 workflows (kind: module|flow with typed steps)`;
    const issue: WorkflowIssue = { severity: 'error', file, path: 'kind', message, rule: 'schema' };
    const line = lineForPath(doc, lc, [v4Key(data)]);
    if (line !== undefined) issue.line = line;
    issues.push(issue);
    return { issues };
  }
  const result = WorkflowSchema.safeParse(data, { error: (iss) => friendlyMessage(iss as never) });
  if (!result.success) {
    for (const iss of result.error.issues) {
      const issue: WorkflowIssue = { severity: 'error', file, path: pathText(iss.path), message: iss.message, rule: 'schema' };
      const line = lineForPath(doc, lc, iss.path as (string | number)[]);
      if (line !== undefined) issue.line = line;
      issues.push(issue);
    }
    return { issues };
  }

  const wf: ParsedWorkflow = result.data;
  wf.file_path = file ? resolve(file) : '';
  wf.checksum = checksumOf(text);
  wf.raw = text;
  attachOrigins(wf, doc, lc, file);
  const rootKeys = Object.keys(data as Record<string, unknown>);
  const origin = originOf(wf);
  if (origin) {
    const unknown = rootKeys.filter((k) => !WORKFLOW_KEYS.has(k));
    if (unknown.length) origin.unknownKeys = unknown;
    if (wf.extends) {
      const ignored = rootKeys.filter((k) => WORKFLOW_KEYS.has(k) && !EXTENDS_OWN_KEYS.has(k));
      if (ignored.length) origin.ignoredKeys = ignored;
    }
  }
  return { workflow: wf, issues };
}
