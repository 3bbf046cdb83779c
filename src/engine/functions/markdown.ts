/**
 * Markdown functions (reference §10.2 "markdown"). No terminal markdown renderer is installed, so
 * render/print_markdown_from_file answer the raw markdown (the reference's own fallback).
 *
 * render_markdown_report finds the ```osm-func blocks and inline `expr`{.osm-func} spans in the
 * template text first and renders `{{Var}}` inside each piece afterwards, so a variable value
 * (target, tool output) can never inject a new osm-func block: data stays data.
 */
import { join } from 'node:path';
import type { FnImpl } from './registry.js';
import { argStr, displayValue, forEachLine, readText, stateOf, writeText } from './helpers.js';
import { cellText, parseCsv, parseObjectLine } from './output.js';
import { render } from '../../workflow/template.js';
import { getFunction } from './registry.js';
import type { FnContext } from '../js-runtime.js';

/** Escapes a table cell: pipes and line breaks would end the cell. */
function cell(v: string): string {
  return v.replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

/** A GitHub-flavoured markdown table. */
export function markdownTable(header: string[], rows: string[][]): string {
  const lines = [`| ${header.map(cell).join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const r of rows) lines.push(`| ${header.map((_h, i) => cell(r[i] ?? '')).join(' | ')} |`);
  return `${lines.join('\n')}\n`;
}

type Piece = { kind: 'text'; text: string } | { kind: 'block'; code: string } | { kind: 'inline'; code: string };

const FUNC_RE = /```osm-func[^\n]*\n([\s\S]*?)\n?```|`([^`\n]+)`\{\.osm-func\}/g;

/** Splits a template into text and osm-func pieces (before any variable is substituted). */
export function splitReport(template: string): Piece[] {
  const pieces: Piece[] = [];
  let last = 0;
  for (const m of template.matchAll(FUNC_RE)) {
    if (m.index! > last) pieces.push({ kind: 'text', text: template.slice(last, m.index) });
    pieces.push(m[1] !== undefined ? { kind: 'block', code: m[1] } : { kind: 'inline', code: m[2]! });
    last = m.index! + m[0].length;
  }
  if (last < template.length) pieces.push({ kind: 'text', text: template.slice(last) });
  return pieces;
}

/** Renders a report template with the evaluation's variables and runs its osm-func pieces. */
export function renderReport(ctx: FnContext, template: string): string {
  const state = stateOf(ctx);
  const vars = { ...state.vars, ...Object.fromEntries(state.runtimeVars) };
  return splitReport(template)
    .map((p) => {
      try {
        if (p.kind === 'text') return render(p.text, vars);
        const value = state.evaluate(render(p.code, vars));
        return displayValue(value);
      } catch (err) {
        return `<!-- ERROR: ${String((err as Error).message ?? err).replace(/-->/g, '--&gt;')} -->`;
      }
    })
    .join('');
}

/** The table of a JSONL file: header = keys of the first object, new keys appended as seen. */
function jsonlTable(path: string): string | null {
  const header: string[] = [];
  const rows: Record<string, unknown>[] = [];
  const ok = forEachLine(path, (line) => {
    const obj = parseObjectLine(line);
    if (!obj) return;
    for (const k of Object.keys(obj)) if (!header.includes(k)) header.push(k);
    rows.push(obj);
  });
  if (!ok) return null;
  return markdownTable(header, rows.map((r) => header.map((h) => cellText(r[h]))));
}

interface SarifResult {
  level?: string;
  ruleId?: string;
  message?: { text?: string };
  locations?: { physicalLocation?: { artifactLocation?: { uri?: string }; region?: { startLine?: number } } }[];
  properties?: { severity?: string };
}

/** Severity, location, title, description rows of a SARIF log. */
function sarifTable(text: string): string | null {
  let doc: { runs?: { tool?: { driver?: { rules?: { id?: string; shortDescription?: { text?: string }; name?: string }[] } }; results?: SarifResult[] }[] };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch {
    return null;
  }
  if (!doc || !Array.isArray(doc.runs)) return null;
  const rows: string[][] = [];
  for (const run of doc.runs) {
    const rules = new Map((run.tool?.driver?.rules ?? []).map((r) => [r.id ?? '', r]));
    for (const r of run.results ?? []) {
      const loc = r.locations?.[0]?.physicalLocation;
      const where = loc?.artifactLocation?.uri ? `${loc.artifactLocation.uri}${loc.region?.startLine ? `:${loc.region.startLine}` : ''}` : '';
      const rule = rules.get(r.ruleId ?? '');
      rows.push([r.properties?.severity ?? r.level ?? 'warning', where, rule?.shortDescription?.text ?? rule?.name ?? r.ruleId ?? '', r.message?.text ?? '']);
    }
  }
  return markdownTable(['Severity', 'Location', 'Title', 'Description'], rows);
}

/** The markdown functions, by snake_case name (aliases come from the catalogue). */
export const markdownFunctions: Record<string, FnImpl> = {
  render_markdown_from_file: (_c, p) => {
    const path = argStr(p);
    return path === null ? '' : (readText(path) ?? '');
  },
  print_markdown_from_file: (ctx, p) => {
    const path = argStr(p);
    const text = path === null ? '' : (readText(path) ?? '');
    if (text !== '') stateOf(ctx).emit(text.replace(/\n$/, ''));
    return text;
  },
  convert_jsonl_to_markdown: (_c, i, o) => {
    const input = argStr(i);
    const output = argStr(o);
    if (input === null || output === null) return false;
    const table = jsonlTable(input);
    return table !== null && writeText(output, table);
  },
  convert_csv_to_markdown: (_c, p) => {
    const path = argStr(p);
    const text = path === null ? null : readText(path);
    if (text === null) return '';
    const [header, ...rows] = parseCsv(text);
    return header ? markdownTable(header, rows) : '';
  },
  render_markdown_report: (ctx, t, o) => {
    const tpl = argStr(t);
    const output = argStr(o);
    const text = tpl === null ? null : readText(tpl);
    if (text === null || output === null) return false;
    try {
      return writeText(output, renderReport(ctx, text));
    } catch {
      return false;
    }
  },
  generate_security_report: (ctx, t) => {
    const tpl = argStr(t);
    const text = tpl === null ? null : readText(tpl);
    const out = ctx.output || String(stateOf(ctx).vars.Output ?? '');
    if (text === null || !out) return false;
    const dest = join(out, 'security-report.md');
    let written = false;
    try {
      written = writeText(dest, renderReport(ctx, text));
    } catch {
      return false;
    }
    // Registered through the database category when the data plane provides it.
    if (written) getFunction('register_artifact')?.(ctx, dest, 'markdown');
    return written;
  },
  convert_sarif_to_markdown: (_c, i, o) => {
    const input = argStr(i);
    const output = argStr(o);
    const text = input === null ? null : readText(input);
    if (text === null || output === null) return false;
    const table = sarifTable(text);
    return table !== null && writeText(output, table);
  },
};
