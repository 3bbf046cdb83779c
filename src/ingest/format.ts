/** Rows as text for workflow functions: a markdown table or JSONL (one object per line). */

export type RowFormat = 'markdown' | 'jsonl';

/** 'jsonl' (also 'json') or 'markdown' (the default for anything else). */
export function rowFormat(value: unknown): RowFormat {
  const v = typeof value === 'string' ? value.trim().toLowerCase() : '';
  return v === 'jsonl' || v === 'json' ? 'jsonl' : 'markdown';
}

function cell(v: unknown): string {
  const text = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** A markdown table of `rows` with `columns` (default: the keys of the first row). */
export function markdownTable(rows: Record<string, unknown>[], columns?: string[]): string {
  const cols = columns ?? Object.keys(rows[0] ?? {});
  if (cols.length === 0) return '';
  const lines = [`| ${cols.join(' | ')} |`, `| ${cols.map(() => '---').join(' | ')} |`];
  for (const r of rows) lines.push(`| ${cols.map((c) => cell(r[c])).join(' | ')} |`);
  return `${lines.join('\n')}\n`;
}

/** One JSON object per line (trailing newline when non-empty). */
export function jsonlText(rows: unknown[]): string {
  return rows.length === 0 ? '' : `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
}

/** Rows in the requested format. */
export function formatRows(rows: Record<string, unknown>[], format: RowFormat, columns?: string[]): string {
  return format === 'jsonl' ? jsonlText(rows) : markdownTable(rows, columns);
}
