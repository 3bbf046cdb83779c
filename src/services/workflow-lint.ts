/**
 * The lint report of an installed workflow (parser, validator and linter findings with their
 * lines), as `osm workflow validate` prints it: the dashboard shows each message at its line of
 * the YAML. Issues found in another file (a parent reached through `extends`, a module) name that
 * file by its base name and carry no line of this one.
 */
import { basename, resolve } from 'node:path';
import type { AppContext } from './context.js';
import { resolveWorkflowFile } from './workflows.js';

export interface LintIssueView {
  severity: 'error' | 'warning' | 'info';
  message: string;
  path?: string;
  rule?: string;
  /** Line in this workflow's file (absent when the issue is about another file). */
  line?: number;
  /** Base name of the other file an issue is about. */
  file?: string;
}

export interface LintReport {
  name: string;
  kind: string;
  valid: boolean;
  errors: number;
  warnings: number;
  issues: LintIssueView[];
}

/** Lints the installed workflow `name` (404 when there is none). */
export function lintInstalledWorkflow(app: AppContext, name: string): LintReport {
  const file = resolve(resolveWorkflowFile(app, name));
  const check = app.loader.check(file, true);
  const issues = check.issues
    .map((i): LintIssueView => {
      const same = !i.file || resolve(i.file) === file;
      return {
        severity: i.severity,
        message: i.message,
        ...(i.path ? { path: i.path } : {}),
        ...(i.rule ? { rule: i.rule } : {}),
        ...(same && i.line !== undefined ? { line: i.line } : {}),
        ...(!same ? { file: basename(i.file) } : {}),
      };
    })
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const errors = issues.filter((i) => i.severity === 'error').length;
  return { name: check.workflow?.name ?? name, kind: check.workflow?.kind ?? 'unknown', valid: errors === 0, errors, warnings: issues.filter((i) => i.severity === 'warning').length, issues };
}
