/** `osm report`: a workspace's assets, findings and recent changes as an HTML, Markdown or JSON report. */
import { errors } from '../errors.js';
import { parseDiffTime } from './diffs.js';
import { renderReportAsync, reportFormat } from '../report/index.js';
import type { AppContext } from './context.js';

export interface ReportRequest {
  workspace: string;
  format: string;
  /** Start of the "changes" window (RFC3339, Unix time, YYYY-MM-DD…); default: start of the newest run. */
  since?: string;
}

/** The report text; unknown workspaces and formats are errors. */
export async function workspaceReport(app: AppContext, req: ReportRequest): Promise<string> {
  const workspace = (req.workspace ?? '').trim();
  if (!workspace) throw errors.workspaceRequired();
  const format = reportFormat(req.format ?? 'html');
  if (!(await app.repos.workspaces.get(workspace))) throw errors.workspaceNotFound(workspace);
  let since: string | undefined;
  if (req.since !== undefined) {
    since = parseDiffTime(req.since);
    if (since === undefined) throw errors.invalidTimeFormat('--since');
  }
  return renderReportAsync(app.repos, workspace, format, { since });
}
