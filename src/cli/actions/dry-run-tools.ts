/**
 * The tools a dry run would need: for a module its `dependencies.commands`, for a flow those of
 * every module. Missing ones are listed before the plan, so `--dry-run` says what to install and
 * which modules a flow would skip (the bundled flows skip a module whose tool is absent).
 */
import type { Workflow } from '../../workflow/types.js';
import type { WorkflowLoader } from '../../workflow/loader.js';
import { commandExists } from '../../engine/deps-check.js';
import { formatIssue } from '../../workflow/lint.js';

/** `tool → modules that need it`, for the tools not found on PATH (binaries folder first). */
export function missingTools(loader: WorkflowLoader, wf: Workflow, pathEnv: string): Map<string, string[]> {
  const modules = wf.kind === 'flow' ? loader.flowModules(wf).flatMap((m) => (m.workflow ? [m.workflow] : [])) : [wf];
  const missing = new Map<string, string[]>();
  for (const m of modules) {
    for (const cmd of m.dependencies.commands) {
      if (!cmd || commandExists(cmd, pathEnv)) continue;
      missing.set(cmd, [...(missing.get(cmd) ?? []), m.name]);
    }
  }
  return missing;
}

/** The lines a dry run prints for the missing tools of a flow (a module's own are an error already). */
export function missingToolLines(loader: WorkflowLoader, wf: Workflow, pathEnv: string): string[] {
  const missing = missingTools(loader, wf, pathEnv);
  if (missing.size === 0) return [];
  return [
    `⚠ Tools not installed (modules that need them are skipped by the bundled flows, or fail):`,
    ...[...missing].sort(([a], [b]) => a.localeCompare(b)).map(([tool, users]) => `  ${tool}: needed by ${users.join(', ')}`),
  ];
}

/** Lint rules about placeholders that would reach a command unrendered (or render empty). */
const TEMPLATE_RULES = new Set(['undefined-variable', 'foreach-variable', 'template-syntax']);

/**
 * The lines a dry run prints for `[[var]]` / `{{var}}` placeholders that a run would not render:
 * the variable rules of the linter over the workflow and, for a flow, every module file it runs,
 * with file:line. `errors` counts the ones that fail the step at run time (`[[var]]` in a command
 * outside any foreach).
 */
export function templateIssueLines(loader: WorkflowLoader, wf: Workflow): { lines: string[]; errors: number } {
  const files = new Set<string>();
  if (wf.file_path) files.add(wf.file_path);
  if (wf.kind === 'flow') for (const m of loader.flowModules(wf)) if (m.workflow?.file_path) files.add(m.workflow.file_path);
  const lines: string[] = [];
  let errors = 0;
  for (const file of files) {
    for (const issue of loader.check(file, true).issues) {
      if (!issue.rule || !TEMPLATE_RULES.has(issue.rule)) continue;
      if (issue.severity === 'error') errors++;
      lines.push(`${issue.severity === 'error' ? '✘ error' : '⚠ warning'}: ${formatIssue(issue)} [${issue.rule}]`);
    }
  }
  return { lines, errors };
}
