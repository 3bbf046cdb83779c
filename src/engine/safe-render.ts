import { render, tagEnd, tagVariables } from '../workflow/template.js';

/**
 * Renders command and script templates so that values from untrusted sources (foreach items read
 * from tool output, values computed by scripts, HTTP/LLM responses) can never become shell or
 * JavaScript code.
 *
 * Each `{{ expr }}` whose root variable is tainted is escaped for the quoting context it sits in.
 * Shell: unquoted → single-quoted word, inside "…" → backslash-escaped, inside '…' → '\'' splices.
 * JavaScript: inside a string literal → escaped for that literal, unquoted → a JSON string literal.
 * Values made only of harmless characters are inserted unchanged, so ordinary workflows render
 * exactly as Osmedeus renders them. Untainted values (operator-written defaults, built-ins,
 * validated targets and params) are rendered as the reference does.
 */
export type Dialect = 'shell' | 'js';

export function renderShell(text: string, vars: Record<string, unknown>, tainted: ReadonlySet<string>): string {
  return renderSafe(text, vars, tainted, 'shell');
}

export function renderJs(text: string, vars: Record<string, unknown>, tainted: ReadonlySet<string>): string {
  return renderSafe(text, vars, tainted, 'js');
}

type Quote = '' | "'" | '"' | '`';

function renderSafe(text: string, vars: Record<string, unknown>, tainted: ReadonlySet<string>, dialect: Dialect): string {
  if (!text.includes('{{') || tainted.size === 0) return render(text, vars);
  const values: string[] = [];
  let out = '';
  let i = 0;
  let quote: Quote = '';
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    const literal = open === -1 ? text.slice(i) : text.slice(i, open);
    quote = dialect === 'shell' ? advanceShell(literal, quote) : advanceJs(literal, quote);
    out += literal;
    if (open === -1) break;
    const close = tagEnd(text, open);
    if (close === -1) {
      out += text.slice(open); // render() reports the unclosed tag
      break;
    }
    const expr = text.slice(open + 2, close);
    // Every variable the expression reads counts (`{{ (x) }}`, `{{ a | default: x }}`), not only the first name.
    if (exprRoots(expr).some((r) => tainted.has(r))) {
      const value = render(`{{${expr}}}`, vars);
      values.push(dialect === 'shell' ? escapeShell(value, quote) : escapeJs(value, quote));
      out += `\u0000OSM${values.length - 1}\u0000`;
    } else {
      out += text.slice(open, close + 2);
    }
    i = close + 2;
  }
  return render(out, vars).replace(/\u0000OSM(\d+)\u0000/g, (_m, n: string) => values[Number(n)] ?? '');
}

/** First identifier of a template expression (`a.b[0] | x` → `a`). */
export function rootName(expr: string): string {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(expr);
  return m ? m[1]! : '';
}

/** Variables a tag's content reads: all of them when it parses, else its first name. */
function exprRoots(expr: string): string[] {
  const roots = tagVariables(expr);
  if (roots) return roots;
  const r = rootName(expr);
  return r ? [r] : [];
}

/** Root variable names referenced by `{{…}}` in a text (every operand of each tag). */
export function referencedRoots(text: string): string[] {
  const names: string[] = [];
  let i = 0;
  for (;;) {
    const open = text.indexOf('{{', i);
    if (open === -1) break;
    const close = tagEnd(text, open);
    if (close === -1) break;
    names.push(...exprRoots(text.slice(open + 2, close)));
    i = close + 2;
  }
  return names;
}

function advanceShell(chunk: string, start: Quote): Quote {
  let q = start;
  for (let k = 0; k < chunk.length; k++) {
    const c = chunk[k];
    if (q === "'") {
      if (c === "'") q = '';
    } else if (q === '"') {
      if (c === '\\') k++;
      else if (c === '"') q = '';
    } else if (c === '\\') k++;
    else if (c === "'") q = "'";
    else if (c === '"') q = '"';
  }
  return q;
}

function advanceJs(chunk: string, start: Quote): Quote {
  let q = start;
  for (let k = 0; k < chunk.length; k++) {
    const c = chunk[k];
    if (q) {
      if (c === '\\') k++;
      else if (c === q) q = '';
    } else if (c === "'" || c === '"' || c === '`') q = c;
  }
  return q;
}

const HARMLESS = /^[A-Za-z0-9_.,:/@%+= -]*$/;

/** Escapes a value for the shell quoting context it will appear in. */
export function escapeShell(value: string, quote: Quote): string {
  if (HARMLESS.test(value) && !value.startsWith('-')) return value;
  if (quote === "'") return value.replace(/'/g, `'\\''`);
  if (quote === '"') return value.replace(/([\\"$`])/g, '\\$1');
  return shellQuote(value);
}

/** Escapes a value for the JavaScript context it will appear in. */
export function escapeJs(value: string, quote: Quote): string {
  if (quote === '') {
    if (/^-?\d+(\.\d+)?$/.test(value) || value === 'true' || value === 'false') return value;
    return JSON.stringify(value);
  }
  let s = value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  if (quote === '`') s = s.replace(/`/g, '\\`').replace(/\$\{/g, '\\${');
  else s = s.split(quote).join(`\\${quote}`);
  return s;
}

/** POSIX single-quote quoting of one word. */
export function shellQuote(value: string): string {
  if (value === '') return "''";
  if (/^[A-Za-z0-9_.,:/@%+=-]+$/.test(value) && !value.startsWith('-')) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
