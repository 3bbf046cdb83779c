/**
 * The expression language inside `{{ … }}`: a variable path (`a`, `a.b.0`, `a["x-y"]`), a string
 * or number literal, followed by optional filters (`| default:"x"`, `| quote`). This is a small
 * interpreter on purpose — no `eval`, no `new Function` — so a template can read variables but
 * never reach the JS runtime (field-notes §4.2 item 4).
 */

export type PathSegment = string | number;

export type Operand =
  | { kind: 'path'; root: string; segments: PathSegment[] }
  | { kind: 'literal'; value: string | number };

export interface Filter {
  name: string;
  arg?: Operand;
}

export interface Expression {
  operand: Operand;
  filters: Filter[];
}

/** Thrown for malformed expressions; template.ts wraps it into a TemplateError. */
export class ExpressionSyntaxError extends Error {}

const IDENT_RE = /[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*/y;
const NUMBER_RE = /-?\d+(?:\.\d+)?/y;
const FILTER_NAMES = new Set(['default', 'lower', 'upper', 'trim', 'length', 'json', 'quote']);
// Keys that would walk into the prototype chain; a lookup never follows them.
const BLOCKED_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

class Cursor {
  pos = 0;
  constructor(readonly text: string) {}
  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }
  peek(): string {
    return this.text[this.pos] ?? '';
  }
  done(): boolean {
    return this.pos >= this.text.length;
  }
  match(re: RegExp): string | undefined {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (!m) return undefined;
    this.pos = re.lastIndex;
    return m[0];
  }
  fail(what: string): never {
    throw new ExpressionSyntaxError(`${what} in expression "${this.text.trim()}"`);
  }
}

function readString(c: Cursor): string {
  const quote = c.peek();
  c.pos++;
  let out = '';
  while (!c.done()) {
    const ch = c.text[c.pos++]!;
    if (ch === '\\' && !c.done()) {
      out += c.text[c.pos++]!;
      continue;
    }
    if (ch === quote) return out;
    out += ch;
  }
  return c.fail('unterminated string');
}

function readOperand(c: Cursor): Operand {
  c.skipSpace();
  const ch = c.peek();
  if (ch === '"' || ch === "'") return { kind: 'literal', value: readString(c) };
  const num = c.match(NUMBER_RE);
  if (num !== undefined) return { kind: 'literal', value: Number(num) };
  const root = c.match(IDENT_RE);
  if (root === undefined) return c.fail(ch ? `unexpected "${ch}"` : 'missing variable name');
  const segments: PathSegment[] = [];
  for (;;) {
    if (c.peek() === '.') {
      c.pos++;
      const seg = c.match(/\d+/y) ?? c.match(IDENT_RE);
      if (seg === undefined) c.fail('expected a name after "."');
      segments.push(/^\d+$/.test(seg) ? Number(seg) : seg);
    } else if (c.peek() === '[') {
      c.pos++;
      c.skipSpace();
      const q = c.peek();
      const seg = q === '"' || q === "'" ? readString(c) : c.match(/\d+/y);
      if (seg === undefined) c.fail('expected an index or quoted key inside "[ ]"');
      c.skipSpace();
      if (c.peek() !== ']') c.fail('expected "]"');
      c.pos++;
      segments.push(typeof seg === 'string' && q !== '"' && q !== "'" ? Number(seg) : seg);
    } else {
      break;
    }
  }
  return { kind: 'path', root, segments };
}

/** Parses the text between `{{` and `}}`; throws ExpressionSyntaxError when malformed. */
export function parseExpression(text: string): Expression {
  const c: Cursor = new Cursor(text);
  const operand = readOperand(c);
  const filters: Filter[] = [];
  c.skipSpace();
  while (c.peek() === '|') {
    c.pos++;
    c.skipSpace();
    const name = c.match(/[A-Za-z_]+/y);
    if (name === undefined) c.fail('expected a filter name after "|"');
    if (!FILTER_NAMES.has(name)) c.fail(`unknown filter "${name}"`);
    c.skipSpace();
    let arg: Operand | undefined;
    if (c.peek() === ':') {
      c.pos++;
      arg = readOperand(c);
    }
    filters.push(arg ? { name, arg } : { name });
    c.skipSpace();
  }
  if (!c.done()) c.fail(`unexpected "${c.peek()}"`);
  return { operand, filters };
}

/** Root variable names an expression reads (its operand and filter arguments). */
export function expressionRoots(expr: Expression): string[] {
  const roots: string[] = [];
  if (expr.operand.kind === 'path') roots.push(expr.operand.root);
  for (const f of expr.filters) if (f.arg?.kind === 'path') roots.push(f.arg.root);
  return roots;
}

function step(value: unknown, seg: PathSegment): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  const key = String(seg);
  if (BLOCKED_KEYS.has(key)) return undefined;
  if (!Object.prototype.hasOwnProperty.call(value, key)) return undefined;
  return (value as Record<string, unknown>)[key];
}

function resolveOperand(op: Operand, vars: Record<string, unknown>): unknown {
  if (op.kind === 'literal') return op.value;
  let value = Object.prototype.hasOwnProperty.call(vars, op.root) ? vars[op.root] : undefined;
  for (const seg of op.segments) value = step(value, seg);
  return value;
}

/** Wraps text in single quotes for POSIX sh, escaping embedded single quotes. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Evaluates a parsed expression. `toText` is the engine's value→string conversion (passed in to
 * avoid an import cycle); filters that produce text use it.
 */
export function evaluateExpression(expr: Expression, vars: Record<string, unknown>, toText: (v: unknown) => string): unknown {
  let value = resolveOperand(expr.operand, vars);
  for (const f of expr.filters) {
    switch (f.name) {
      case 'default': {
        const empty = value === undefined || value === null || value === '' || value === false;
        if (empty) value = f.arg ? resolveOperand(f.arg, vars) : '';
        break;
      }
      case 'lower':
        value = toText(value).toLowerCase();
        break;
      case 'upper':
        value = toText(value).toUpperCase();
        break;
      case 'trim':
        value = toText(value).trim();
        break;
      case 'length':
        value = Array.isArray(value) ? value.length : value && typeof value === 'object' ? Object.keys(value).length : toText(value).length;
        break;
      case 'json':
        value = JSON.stringify(value ?? null);
        break;
      case 'quote':
        value = shellQuote(toText(value));
        break;
    }
  }
  return value;
}
