/** Workspace reports: the data (data.ts) rendered as HTML, Markdown or JSON. */
import { errors } from '../errors.js';
import type { AsyncRepos, Store } from '../store/index.js';
import { runReads } from '../store/reads.js';
import { reportData, reportDataReads, type ReportData, type ReportOptions } from './data.js';
import { renderHtml } from './html.js';
import { renderMarkdown } from './markdown.js';

export type ReportFormat = 'html' | 'md' | 'json';

/** `html`, `md` (also `markdown`) or `json`; anything else is an error naming the choices. */
export function reportFormat(value: string): ReportFormat {
  const v = value.trim().toLowerCase();
  if (v === 'html' || v === 'json') return v;
  if (v === 'md' || v === 'markdown') return 'md';
  throw errors.reportFormat(value);
}

/** Report data as text in `format`. */
function render(data: ReportData, format: ReportFormat): string {
  if (format === 'html') return renderHtml(data);
  if (format === 'md') return renderMarkdown(data);
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** The report of `workspace` as text in `format`, read from the synchronous store. */
export function renderReport(store: Store, workspace: string, format: ReportFormat, opts: ReportOptions = {}): string {
  return render(reportData(store, workspace, opts), format);
}

/** The report of `workspace` as text in `format`, read from the async store (either engine). */
export async function renderReportAsync(repos: AsyncRepos, workspace: string, format: ReportFormat, opts: ReportOptions = {}): Promise<string> {
  return render(await runReads(reportDataReads(workspace, opts), repos), format);
}

export { reportData, type ReportData, type ReportOptions } from './data.js';
