/**
 * The tools a dry run would need: for a module its `dependencies.commands`, for a flow those of
 * every module. Missing ones are listed before the plan, so `--dry-run` says what to install and
 * which modules a flow would skip (the bundled flows skip a module whose tool is absent).
 */
import type { Workflow } from '../../workflow/types.js';
import type { WorkflowLoader } from '../../workflow/loader.js';
import { commandExists } from '../../engine/deps-check.js';

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
