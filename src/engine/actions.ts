import type { Action } from '../workflow/types.js';
import { render } from '../workflow/template.js';
import { DEFAULT_SCRIPT_TIMEOUT_MS, conditionAsync, runScriptAsync } from './scripts.js';
import { runLine } from './steps/bash.js';
import { renderShell } from './safe-render.js';
import type { Scope } from './types.js';

export interface ActionsResult {
  continueOnError: boolean;
  abort: boolean;
}

/**
 * Runs on_success / on_error actions (reference §1.15): log, export, notify, run, continue,
 * abort. An action `condition` is JS evaluated without rendering; falsy or erroring → skipped.
 * Actions never throw: a failing `run` action is reported and ignored.
 */
export async function runActions(actions: Action[] | undefined, scope: Scope, logFile: string): Promise<ActionsResult> {
  const result: ActionsResult = { continueOnError: false, abort: false };
  for (const a of actions ?? []) {
    if (a.condition) {
      let ok = false;
      try {
        ok = await conditionAsync(a.condition, scope.vars, scope);
      } catch {
        ok = false;
      }
      if (!ok) continue;
    }
    switch (a.action) {
      case 'continue':
        result.continueOnError = true;
        break;
      case 'abort':
        result.abort = true;
        scope.vars._abort = true;
        break;
      case 'log':
        scope.exec.printer.info(safeRender(a.message ?? '', scope));
        break;
      case 'export':
        if (a.name) scope.vars[a.name] = a.value;
        break;
      case 'notify': {
        const message = safeRender(a.notify ?? a.message ?? '', scope);
        scope.exec.log.write('INFO', 'action notify', { message, workflow: scope.workflow.name, run_uuid: scope.exec.runUuid });
        scope.exec.printer.info(`notify: ${message}`);
        break;
      }
      case 'run':
        try {
          if ((a.type ?? 'bash') === 'function') {
            for (const fn of a.functions ?? []) await runScriptAsync(fn, scope, { timeoutMs: DEFAULT_SCRIPT_TIMEOUT_MS, quick: true });
          } else if (a.command) {
            await runLine(renderShell(a.command, scope.vars, scope.tainted), scope, { logFile });
          }
        } catch (err) {
          scope.exec.printer.warn(`action run failed: ${(err as Error).message}`);
        }
        break;
      default:
        // The reference ignores such entries; say so once per evaluation instead of failing.
        scope.exec.printer.warn((a as Action).action ? `unknown action '${(a as Action).action}' ignored` : "an action without 'action:' was ignored");
    }
  }
  return result;
}

function safeRender(text: string, scope: Scope): string {
  try {
    return render(text, scope.vars);
  } catch {
    return text;
  }
}
