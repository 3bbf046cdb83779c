/** Workspace reports: the data (data.ts) rendered as HTML, Markdown or JSON. */
import { errors } from '../errors.js';
import type { Store } from '../store/index.js';
import { reportData, type ReportOptions } from './data.js';
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

/** The report of `workspace` as text in `format`. */
export function renderReport(store: Store, workspace: string, format: ReportFormat, opts: ReportOptions = {}): string {
  const data = reportData(store, workspace, opts);
  if (format === 'html') return renderHtml(data);
  if (format === 'md') return renderMarkdown(data);
  return `${JSON.stringify(data, null, 2)}\n`;
}

export { reportData, type ReportData, type ReportOptions } from './data.js';
