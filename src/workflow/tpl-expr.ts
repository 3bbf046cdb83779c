/**
 * The expression language inside `{{ … }}`: a variable path (`a`, `a.b.0`, `a["x-y"]`), a string
 * or number literal, integer/float arithmetic as pongo2 (the reference engine) evaluates it
 * (`{{ threads * 6 }}`, `{{ threads / 2 }}`, `+ - * / %`, parentheses), followed by optional
 * filters (`| default:"x"`, `| quote`). A call `name(args)` parses, as in pongo2, and yields
 * nothing (templates have no functions in scope). This is a small interpreter on purpose — no
 * `eval`, no `new Function` — so a template can read variables but never reach the JS runtime
 * (field-notes §4.2 item 4).
 */

export type PathSegment = string | number;

export type Operand =
  | { kind: 'path'; root: string; segments: PathSegment[] }
  | { kind: 'literal'; value: string | number };

/** An expression tree: operands, calls, arithmetic. */
export type ExprNode =
  | Operand
  | { kind: 'call'; callee: Operand & { kind: 'path' }; args: ExprNode[] }
  | { kind: 'unary'; op: '-' | '+'; arg: ExprNode }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/' | '%'; left: ExprNode; right: ExprNode };

export interface Filter {
  name: string;
  arg?: Operand;
}

export interface Expression {
  node: ExprNode;
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

const MAX_DEPTH = 64;

function parsePrimary(c: Cursor, depth: number): ExprNode {
  if (depth > MAX_DEPTH) c.fail('expression nested too deeply');
  c.skipSpace();
  const ch = c.peek();
  if (ch === '(') {
    c.pos++;
    const inner = parseAdditive(c, depth + 1);
    c.skipSpace();
    if (c.peek() !== ')') c.fail('expected ")"');
    c.pos++;
    return inner;
  }
  if (ch === '-' || ch === '+') {
    // `-5` is a number literal; any other sign is a unary operator.
    if (ch === '-' && /\d/.test(c.text[c.pos + 1] ?? '')) return readOperand(c);
    c.pos++;
    return { kind: 'unary', op: ch, arg: parsePrimary(c, depth + 1) };
  }
  const operand = readOperand(c);
  c.skipSpace();
  if (c.peek() === '(' && operand.kind === 'path') {
    c.pos++;
    const args: ExprNode[] = [];
    c.skipSpace();
    if (c.peek() !== ')') {
      for (;;) {
        args.push(parseAdditive(c, depth + 1));
        c.skipSpace();
        if (c.peek() === ',') {
          c.pos++;
          continue;
        }
        break;
      }
    }
    if (c.peek() !== ')') c.fail('expected ")" after the arguments');
    c.pos++;
    return { kind: 'call', callee: operand, args };
  }
  return operand;
}

function parseMultiplicative(c: Cursor, depth: number): ExprNode {
  let left = parsePrimary(c, depth);
  for (;;) {
    c.skipSpace();
    const op = c.peek();
    if (op !== '*' && op !== '/' && op !== '%') return left;
    c.pos++;
    left = { kind: 'binary', op, left, right: parsePrimary(c, depth) };
  }
}

function parseAdditive(c: Cursor, depth: number): ExprNode {
  let left = parseMultiplicative(c, depth);
  for (;;) {
    c.skipSpace();
    const op = c.peek();
    if (op !== '+' && op !== '-') return left;
    c.pos++;
    left = { kind: 'binary', op, left, right: parseMultiplicative(c, depth) };
  }
}

/** Parses the text between `{{` and `}}`; throws ExpressionSyntaxError when malformed. */
export function parseExpression(text: string): Expression {
  const c: Cursor = new Cursor(text);
  c.skipSpace();
  if (c.done()) c.fail('missing variable name');
  const node = parseAdditive(c, 0);
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
  return { node, filters };
}

function nodeRoots(node: ExprNode, roots: string[]): void {
  switch (node.kind) {
    case 'path':
      roots.push(node.root);
      break;
    case 'call':
      // The callee is a function name, not a variable; its arguments are read.
      for (const a of node.args) nodeRoots(a, roots);
      break;
    case 'unary':
      nodeRoots(node.arg, roots);
      break;
    case 'binary':
      nodeRoots(node.left, roots);
      nodeRoots(node.right, roots);
      break;
  }
}

/** Root variable names an expression reads (its operands and filter arguments). */
export function expressionRoots(expr: Expression): string[] {
  const roots: string[] = [];
  nodeRoots(expr.node, roots);
  for (const f of expr.filters) if (f.arg?.kind === 'path') roots.push(f.arg.root);
  return roots;
}

/** Names called as functions inside the expression (`{{ file_length("x") }}` → file_length). */
export function expressionCalls(expr: Expression): string[] {
  const calls: string[] = [];
  const walk = (n: ExprNode): void => {
    if (n.kind === 'call') {
      calls.push([n.callee.root, ...n.callee.segments].join('.'));
      n.args.forEach(walk);
    } else if (n.kind === 'unary') walk(n.arg);
    else if (n.kind === 'binary') {
      walk(n.left);
      walk(n.right);
    }
  };
  walk(expr.node);
  return calls;
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

// pongo2 number semantics: a value is a float only when it is a non-integral number; strings are
// read as numbers (anything unparsable, booleans, null and undefined count as 0).
const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function isFloatValue(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v);
}

function toFloat(v: unknown): number {
  if (typeof v === 'number') return Number.isFinite(v) ? v : 0;
  if (typeof v === 'string' && FLOAT_TEXT.test(v)) return Number(v);
  return 0;
}

function toInt(v: unknown): number {
  return Math.trunc(toFloat(v));
}

function arithmetic(op: '+' | '-' | '*' | '/' | '%', a: unknown, b: unknown): number {
  const float = isFloatValue(a) || isFloatValue(b);
  if (op === '%') {
    const d = toInt(b);
    if (d === 0) throw new ExpressionSyntaxError('division by zero in "%"');
    return toInt(a) % d;
  }
  if (float) {
    const x = toFloat(a);
    const y = toFloat(b);
    switch (op) {
      case '+': return x + y;
      case '-': return x - y;
      case '*': return x * y;
      default: return x / y;
    }
  }
  const x = toInt(a);
  const y = toInt(b);
  switch (op) {
    case '+': return x + y;
    case '-': return x - y;
    case '*': return x * y;
    default:
      if (y === 0) throw new ExpressionSyntaxError('division by zero in "/"');
      return Math.trunc(x / y);
  }
}

function evaluateNode(node: ExprNode, vars: Record<string, unknown>): unknown {
  switch (node.kind) {
    case 'path':
    case 'literal':
      return resolveOperand(node, vars);
    case 'call': {
      // Templates have no functions in scope: like pongo2, calling an undefined name yields nothing.
      const callee = resolveOperand(node.callee, vars);
      if (callee === undefined || callee === null) return undefined;
      const name = [node.callee.root, ...node.callee.segments].join('.');
      throw new ExpressionSyntaxError(`'${name}' is not a function`);
    }
    case 'unary': {
      const v = evaluateNode(node.arg, vars);
      const n = isFloatValue(v) ? toFloat(v) : toInt(v);
      return node.op === '-' ? (n === 0 ? 0 : -n) : n;
    }
    case 'binary':
      return arithmetic(node.op, evaluateNode(node.left, vars), evaluateNode(node.right, vars));
  }
}

/**
 * Evaluates a parsed expression. `toText` is the engine's value→string conversion (passed in to
 * avoid an import cycle); filters that produce text use it. Throws ExpressionSyntaxError for
 * run-time errors (division by zero, calling a variable).
 */
export function evaluateExpression(expr: Expression, vars: Record<string, unknown>, toText: (v: unknown) => string): unknown {
  let value = evaluateNode(expr.node, vars);
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
