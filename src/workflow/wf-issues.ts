/**
 * Building and printing WorkflowIssue values. An issue names the file and line of the node it is
 * about (which, after inheritance, may be the parent's file).
 */
import type { Workflow, WorkflowIssue } from './types.js';
import { lineOf, originOf } from './wf-origin.js';

/** Makes an issue about `node` (or its `key`), falling back to the workflow's file. */
export function issueAt(
  wf: Workflow,
  node: object | undefined,
  key: string | undefined,
  path: string,
  message: string,
  severity: WorkflowIssue['severity'] = 'error',
  rule?: string,
): WorkflowIssue {
  const origin = originOf(node) ?? originOf(wf);
  const issue: WorkflowIssue = { severity, file: origin?.file ?? wf.file_path, path, message };
  const line = lineOf(node, key) ?? lineOf(wf);
  if (line !== undefined) issue.line = line;
  if (rule) issue.rule = rule;
  return issue;
}

/** `file:line: path: message` (line and path omitted when unknown). */
export function formatIssue(issue: WorkflowIssue): string {
  const where = issue.line !== undefined ? `${issue.file}:${issue.line}` : issue.file;
  const head = where ? `${where}: ` : '';
  return issue.path ? `${head}${issue.path}: ${issue.message}` : `${head}${issue.message}`;
}

/**
 * The reference's wording for a workflow that fails to load (workflow-engine §1.16), which scripts
 * grep for: `validation error: <field> - <message>`, here followed by where it is.
 */
export function formatValidationError(issue: WorkflowIssue): string {
  const where = issue.line !== undefined ? `${issue.file}:${issue.line}` : issue.file;
  const what = issue.path ? `${issue.path} - ${issue.message}` : issue.message;
  return `validation error: ${what}${where ? ` (${where})` : ''}`;
}

/** True when any issue is an error. */
export function hasErrors(issues: readonly WorkflowIssue[]): boolean {
  return issues.some((i) => i.severity === 'error');
}
