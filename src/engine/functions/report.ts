/**
 * `generate_workspace_report(workspace, format, output_path)`: the `osm report` document written
 * from a workflow step (html, md or json). The "changes" section covers the run the step belongs
 * to when that run is a flow (the report module closes a scan), and the newest other run of the
 * workspace when the report module runs alone after a scan.
 */
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, optStr } from './helpers.js';
import { messageOf } from '../../errors.js';
import type { Store } from '../../store/index.js';
import { renderReport, reportFormat } from '../../report/index.js';
import { defaultSince } from '../../report/data.js';
import { atomicWriteFile } from '../../util/fs-safe.js';

function storeOf(ctx: FnContext): Store | undefined {
  const s = ctx.store as Store | undefined;
  return s && typeof s === 'object' && 'assets' in s && 'workspaces' in s ? s : undefined;
}

function warn(ctx: FnContext, message: string): false {
  (ctx.log ?? ((l: string) => process.stdout.write(`${l}\n`)))(`[WARN] generate_workspace_report: ${message}`);
  return false;
}

export const reportFunctions: Record<string, FnImpl> = {
  generate_workspace_report: (ctx, w, f, dest) => {
    const store = storeOf(ctx);
    const ws = argStr(w);
    const path = argStr(dest);
    if (!store || ws === null || path === null) return warn(ctx, 'workspace, output_path and a database are required');
    try {
      const format = reportFormat(optStr(f) || 'html');
      const run = ctx.dbRunId !== undefined ? store.runs.get(ctx.dbRunId) : undefined;
      const since = run && run.workflow_kind === 'flow' && run.started_at ? run.started_at : defaultSince(store, ws, run?.id);
      atomicWriteFile(path, renderReport(store, ws, format, { since }));
      return true;
    } catch (e) {
      return warn(ctx, messageOf(e));
    }
  },
};
