/**
 * The template engine (reference workflow-engine §2.1): `{{ name }}` and dotted lookups, rendered in
 * ONE pass — a substituted value is never parsed again, so a target or tool output containing
 * `{{x}}` stays literal text (field-notes §4.2 item 4: no double evaluation). Strings without `{{`
 * are returned untouched, which keeps bash `${VAR}` and `[[ … ]]` safe.
 */
import { OsmError } from '../errors.js';
import { evaluateExpression, expressionRoots, parseExpression, ExpressionSyntaxError, type Expression } from './tpl-expr.js';

/** A template that cannot be parsed (unclosed `{{`, `{%`/`{#` tags, malformed expression). */
export class TemplateError extends OsmError {
  constructor(detail: string) {
    super('OSM_ERR_TEMPLATE', 400, `template rendering failed: ${detail}`);
    this.name = 'TemplateError';
  }
}

type Segment = { kind: 'text'; text: string } | { kind: 'expr'; raw: string; expr: Expression };

/**
 * Index of the `}}` closing the tag opened at `open`, skipping quoted strings inside the tag as
 * pongo2's lexer does (`{{ f("{{x}}") }}` is one tag); -1 when there is none. A quote that never
 * closes falls back to the first `}}` so the expression parser reports the real problem.
 */
function closeOf(text: string, open: number): number {
  let i = open + 2;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '}' && text[i + 1] === '}') return i;
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) return text.indexOf('}}', open + 2);
      i = j + 1;
      continue;
    }
    i++;
  }
  return -1;
}

/** Index of the `}}` that closes the tag opened at `open` (quoted strings inside skipped); -1 when unclosed. */
export function tagEnd(text: string, open: number): number {
  return closeOf(text, open);
}

/** Every variable a tag's content reads (operands, call arguments, filter arguments); undefined when it does not parse. */
export function tagVariables(inner: string): string[] | undefined {
  try {
    return expressionRoots(parseExpression(inner));
  } catch {
    return undefined;
  }
}

/** True when `inner` (a tag's content) has a `{{` outside quoted strings: a nested, unclosed tag. */
function hasBareOpen(inner: string): boolean {
  let quote = '';
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{' && inner[i + 1] === '{') return true;
  }
  return false;
}

// Parsed templates are cached: workflows render the same strings for every step and target.
const CACHE_LIMIT = 2048;
const cache = new Map<string, Segment[]>();

function parseTemplate(text: string): Segment[] {
  const cached = cache.get(text);
  if (cached) return cached;
  // pongo2 (the reference engine) fails on `{%`/`{#`; we keep them literal instead, because they
  // are ordinary bash (`${#arr[@]}`, `printf '{%s}'`) inside commands that also use `{{…}}`.
  const segments: Segment[] = [];
  let pos = 0;
  while (pos < text.length) {
    const open = text.indexOf('{{', pos);
    if (open === -1) {
      segments.push({ kind: 'text', text: text.slice(pos) });
      break;
    }
    if (open > pos) segments.push({ kind: 'text', text: text.slice(pos, open) });
    const close = closeOf(text, open);
    if (close === -1) throw new TemplateError(`unclosed "{{" at offset ${open}`);
    const inner = text.slice(open + 2, close);
    if (hasBareOpen(inner)) throw new TemplateError(`unclosed "{{" at offset ${open}`);
    try {
      segments.push({ kind: 'expr', raw: text.slice(open, close + 2), expr: parseExpression(inner) });
    } catch (err) {
      if (err instanceof ExpressionSyntaxError) throw new TemplateError(err.message);
      throw err;
    }
    pos = close + 2;
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, segments);
  return segments;
}

/** The syntax error a text's `{{ … }}` tags would fail rendering with, or undefined when they parse. */
export function templateSyntaxError(text: string): string | undefined {
  if (typeof text !== 'string' || !text.includes('{{')) return undefined;
  try {
    parseTemplate(text);
    return undefined;
  } catch (err) {
    if (err instanceof TemplateError) return err.message;
    throw err;
  }
}

/** String form of a variable value: '' for undefined/null, true/false, decimal numbers, JSON for objects. */
export function valueToString(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return Object.is(v, -0) ? '0' : String(v);
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? '' : v.toISOString();
  if (typeof v === 'object') {
    try {
      return JSON.stringify(v);
    } catch {
      return '';
    }
  }
  return String(v);
}

// Applied in order, as the reference does (internal/template/engine.go fixIncompleteExpressions).
const DANGLING_FIXES: Array<[RegExp, string]> = [
  [/>\s*\)/g, '> 0)'],
  [/<\s*\)/g, '< 0)'],
  [/>=\s*\)/g, '>= 0)'],
  [/<=\s*\)/g, '<= 0)'],
  [/==\s*\)/g, '== 0)'],
  [/!=\s*\)/g, '!= 0)'],
  [/>\s*$/, '> 0'],
  [/<\s*$/, '< 0'],
  [/>=\s*$/, '>= 0'],
  [/<=\s*$/, '<= 0'],
  [/==\s*$/, "== ''"],
  [/!=\s*$/, "!= ''"],
];

/**
 * Completes comparisons left dangling by an empty variable so the text stays valid JS:
 * `file_length(x) > ` → `file_length(x) > 0`, `a == )` → `a == 0)`, `a != ` → `a != ''`.
 */
export function fixDanglingOperators(text: string): string {
  let out = text;
  for (const [re, replacement] of DANGLING_FIXES) out = out.replace(re, replacement);
  return out;
}

function evaluate(expr: Expression, vars: Record<string, unknown>): unknown {
  try {
    return evaluateExpression(expr, vars, valueToString);
  } catch (err) {
    if (err instanceof ExpressionSyntaxError) throw new TemplateError(err.message);
    throw err;
  }
}

function renderSegments(segments: Segment[], vars: Record<string, unknown>, keep?: (roots: string[]) => boolean): string {
  let out = '';
  for (const seg of segments) {
    if (seg.kind === 'text') out += seg.text;
    else if (keep && keep(expressionRoots(seg.expr))) out += seg.raw;
    else out += valueToString(evaluate(seg.expr, vars));
  }
  return fixDanglingOperators(out);
}

/** Renders `{{ … }}` expressions in `text` (single pass) and applies the dangling-operator fix-up. */
export function render(text: string, vars: Record<string, unknown>): string {
  if (typeof text !== 'string' || !text.includes('{{')) return text;
  return renderSegments(parseTemplate(text), vars);
}

/**
 * Renders like `render` but leaves every `{{ … }}` whose variables satisfy `keep` as written.
 * The plan uses it to show templates that can only be resolved at run time (step exports,
 * foreach variables) unrendered. Returns the text and whether anything was kept.
 */
export function renderExcept(text: string, vars: Record<string, unknown>, keep: (root: string) => boolean): { text: string; kept: boolean } {
  if (typeof text !== 'string' || !text.includes('{{')) return { text, kept: false };
  let kept = false;
  const out = renderSegments(parseTemplate(text), vars, (roots) => {
    const hit = roots.some(keep);
    if (hit) kept = true;
    return hit;
  });
  return { text: out, kept };
}

// `[[ expr ]]` is only converted when its content is a template expression, so bash tests such
// as `[[ -f "$x" ]]` survive (the reference converts every `[[`, which breaks them).
const LOOP_RE = /\[\[([^\][]*?)\]\]/g;

function isExpression(inner: string): boolean {
  try {
    parseExpression(inner);
    return true;
  } catch {
    return false;
  }
}

/** Converts loop-time `[[ expr ]]` placeholders into `{{ expr }}` (no rendering). */
export function convertLoopSyntax(text: string): string {
  if (typeof text !== 'string' || !text.includes('[[')) return text;
  return text.replace(LOOP_RE, (whole, inner: string) => (isExpression(inner) ? `{{${inner}}}` : whole));
}

/** Renders a foreach-time string: `[[x]]` becomes `{{x}}`, then everything renders in one pass. */
export function renderLoop(text: string, vars: Record<string, unknown>): string {
  return render(convertLoopSyntax(text), vars);
}

/** Renders every string inside objects/arrays (keys untouched); returns a new structure. */
export function renderDeep<T>(value: T, vars: Record<string, unknown>): T {
  if (typeof value === 'string') return render(value, vars) as T;
  if (Array.isArray(value)) return value.map((item) => renderDeep(item, vars)) as T;
  const proto = value && typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = renderDeep(v, vars);
    return out as T;
  }
  return value;
}

function collectRoots(text: string, into: string[]): void {
  let pos = 0;
  while (pos < text.length) {
    const open = text.indexOf('{{', pos);
    if (open === -1) return;
    const close = closeOf(text, open);
    if (close === -1) return;
    try {
      for (const root of expressionRoots(parseExpression(text.slice(open + 2, close)))) {
        if (!into.includes(root)) into.push(root);
      }
    } catch {
      // Malformed expressions are the renderer's error to report, not the linter's variable list.
    }
    pos = close + 2;
  }
}

/** Root variable names referenced by `{{ … }}` and `[[ … ]]` in `text`, in order of appearance. */
export function referencedVariables(text: string): string[] {
  const roots: string[] = [];
  if (typeof text !== 'string') return roots;
  collectRoots(convertLoopSyntax(text), roots);
  return roots;
}

/** True when `text` contains a `{{ … }}` or `[[ expr ]]` placeholder. */
export function hasTemplate(text: string): boolean {
  return typeof text === 'string' && (text.includes('{{') || referencedVariables(text).length > 0);
}
