/**
 * The one secret redactor for settings: objects (`config list`, API JSON), YAML text
 * (`GET /settings/yaml`) and single key paths (`isSecretPath`, for anyone else showing settings).
 *
 * Rule (server-api §9.2, widened): a key containing `_key`, `apikey`, `secret`, `password`,
 * `passwd`, `username`, `credential` or `token` (but not `tokens`, so `max_tokens` stays
 * visible), or named exactly `key`; plus what the reference misses: the user passwords under
 * `server.simple_user_map_key`, every `global_vars.*.value`, `llm_config.custom_headers`, `acp.agents.*.env.*`, and
 * `headers` entries whose name looks like a credential, every URL and header of
 * `notification.webhooks`, and connection URLs (`database.url` …). Empty values stay as they are
 * so users can see what is unset.
 */
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments, parseDocument, type Node } from 'yaml';

export const REDACTED = '[REDACTED]';

const SECRET_KEY_RE = /_key|apikey|secret|password|passwd|username|credential|token(?!s)/i;
const SECRET_HEADER_RE = /auth|token|key|secret|cookie|session|signature|password|credential/i;

/** True when a single key name looks like it holds a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY_RE.test(key) || key.toLowerCase() === 'key';
}

/** True when the value at `path` (e.g. `['server','auth_api_key']`) must be redacted. */
export function isSecretPath(path: readonly (string | number)[]): boolean {
  const p = path.map((s) => (typeof s === 'number' ? s : String(s)));
  if (p[0] === 'server' && p[1] === 'simple_user_map_key' && p.length >= 3) return true;
  if (p[0] === 'global_vars' && p.length >= 2) return p[2] !== 'as_env';
  if (p[0] === 'llm_config' && p[1] === 'custom_headers') return true;
  // ACP agent commands get their API keys through env.
  if (p[0] === 'acp' && p[1] === 'agents' && p[3] === 'env' && p.length >= 5) return true;
  // Outbound webhooks: the URL often is the credential (Slack/Discord/Teams hook paths, ?token=),
  // and every header may carry one.
  if (p[0] === 'notification' && p[1] === 'webhooks' && p.length >= 4 && (p[3] === 'url' || p[3] === 'headers')) return true;
  // Connection URLs carry the password (`postgres://user:pass@host/db`).
  if ((p[0] === 'database' || p[0] === 'redis' || p[0] === 'storage') && p[1] === 'url') return true;
  // Numeric strings are list indexes too (paths split from `a.0.b` keys).
  const keys = p.filter((s): s is string => typeof s === 'string' && !/^\d+$/.test(s));
  const last = keys[keys.length - 1];
  if (last === undefined) return false;
  if (keys.length >= 2 && keys[keys.length - 2]!.toLowerCase() === 'headers' && SECRET_HEADER_RE.test(last)) return true;
  return isSecretKey(last);
}

/**
 * A connection URL with its credentials masked: the password part (and `password`-like query
 * parameters) become `[REDACTED]`, the rest stays readable (`postgres://osm:[REDACTED]@db:5432/osm`).
 * Text that does not parse as a URL is redacted whole.
 */
export function maskUrlPassword(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return REDACTED;
  }
  if (!u.host) return REDACTED;
  const auth = u.username || u.password ? `${u.username}${u.password ? `:${REDACTED}` : ''}@` : '';
  const params = [...u.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${/pass|secret|key|token/i.test(k) ? REDACTED : encodeURIComponent(v)}`);
  return `${u.protocol}//${auth}${u.host}${u.pathname === '/' ? '' : u.pathname}${params.length ? `?${params.join('&')}` : ''}`;
}

/** Paths whose value is a URL shown with only its password masked (see `maskUrlPassword`). */
export function isMaskedUrlPath(path: readonly (string | number)[]): boolean {
  return path.length === 2 && path[0] === 'database' && path[1] === 'url';
}

/** The redacted form of a secret scalar at `path`. */
function redactedScalar(path: readonly (string | number)[], value: unknown): string {
  return isMaskedUrlPath(path) && typeof value === 'string' ? maskUrlPassword(value) : REDACTED;
}

function isEmptyValue(v: unknown): boolean {
  return v === null || v === undefined || v === '';
}

/** A deep copy of `obj` with every non-empty secret scalar replaced by `[REDACTED]`. */
export function redactSettings<T>(obj: T): T {
  return redactValue(obj, []) as T;
}

function redactValue(value: unknown, path: (string | number)[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => redactValue(v, [...path, i]));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redactValue(v, [...path, k]);
    return out;
  }
  if (value !== null && typeof value === 'object') return value;
  if (path.length > 0 && !isEmptyValue(value) && isSecretPath(path)) return redactedScalar(path, value);
  return value;
}

/**
 * Redacts YAML text keeping its layout and comments: each secret value's source span is replaced
 * by `"[REDACTED]"`, whatever its style (plain, quoted, flow map entry, list item, block scalar,
 * alias). Text that does not parse falls back to a conservative line-based pass.
 */
export function redactYamlText(text: string): string {
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  if (!Array.isArray(docs) || list.some((d) => d.errors.length > 0)) return redactYamlLines(text);
  const spans: [number, number, string][] = [];
  for (const doc of list) collectSpans(doc.contents as Node | null, [], spans);
  spans.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [start, end, replacement] of spans) {
    const old = out.slice(start, end);
    out = out.slice(0, start) + JSON.stringify(replacement) + (old.endsWith('\n') ? '\n' : '') + out.slice(end);
  }
  return out;
}

function collectSpans(node: Node | null | undefined, path: (string | number)[], spans: [number, number, string][]): void {
  if (!node) return;
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      collectSpans(pair.value as Node | null, [...path, key], spans);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => collectSpans(item as Node | null, [...path, i], spans));
  } else if ((isScalar(node) || isAlias(node)) && node.range && path.length > 0 && isSecretPath(path)) {
    if (isScalar(node) && isEmptyValue(node.value)) return;
    spans.push([node.range[0], node.range[1], isScalar(node) ? redactedScalar(path, node.value) : REDACTED]);
  }
}

/**
 * Line-based redaction for text that is not valid YAML (the reference's rule plus our context
 * rules). Over-redacts rather than leaks: nested block contents of a secret key are dropped.
 */
export function redactYamlLines(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  const stack: { indent: number; key: string }[] = [];
  let skipDeeperThan = -1;
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    const trimmed = line.trim();
    if (skipDeeperThan >= 0) {
      if (trimmed === '' || indent > skipDeeperThan) continue;
      skipDeeperThan = -1;
    }
    if (trimmed === '' || trimmed.startsWith('#')) {
      out.push(line);
      continue;
    }
    const m = /^(\s*(?:-\s+)*)(["']?)([\w.-]+)\2(\s*):(\s*)(.*)$/.exec(line);
    if (!m) {
      out.push(redactFlowPairs(line, stack.map((s) => s.key)));
      continue;
    }
    const [, lead, quote, key, spaceBefore, spaceAfter, value] = m as unknown as string[];
    const column = lead!.length;
    while (stack.length && stack[stack.length - 1]!.indent >= column) stack.pop();
    const path = [...stack.map((s) => s.key), key!];
    stack.push({ indent: column, key: key! });
    const v = value!.trim();
    const empty = v === '' || v === '""' || v === "''" || v.startsWith('#');
    if (!empty && isSecretPath(path)) {
      out.push(`${lead}${quote}${key}${quote}${spaceBefore}:${spaceAfter || ' '}"${REDACTED}"`);
      // Whatever is nested below a redacted scalar (block scalar body, continuation) is part of it.
      skipDeeperThan = column;
      continue;
    }
    out.push(v.startsWith('{') ? `${lead}${quote}${key}${quote}${spaceBefore}:${spaceAfter}${redactFlowPairs(value!, path)}` : line);
  }
  return out.join('\n');
}

/** Redacts `key: value` pairs written inline (flow maps) within one line. */
function redactFlowPairs(fragment: string, parent: string[]): string {
  return fragment.replace(/([\w.-]+)(["']?)(\s*):(\s*)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,}\]\s][^,}\]]*)/g, (all, key: string, q: string, s1: string, s2: string, val: string) => {
    const v = val.trim();
    if (v === '' || v === '""' || v === "''" || v.startsWith('{') || v.startsWith('[')) return all;
    return isSecretPath([...parent, key]) ? `${key}${q}${s1}:${s2}"${REDACTED}"` : all;
  });
}

/** True when `node` (found at `path`) is, or holds, a non-empty secret. */
function holdsSecret(node: Node | null | undefined, path: (string | number)[]): boolean {
  if (!node) return false;
  if (isMap(node)) return node.items.some((pair) => holdsSecret(pair.value as Node | null, [...path, isScalar(pair.key) ? String(pair.key.value) : String(pair.key)]));
  if (isSeq(node)) return node.items.some((item, i) => holdsSecret(item as Node | null, [...path, i]));
  if (isScalar(node)) return path.length > 0 && !isEmptyValue(node.value) && isSecretPath(path);
  return false;
}

/**
 * YAML aliases in `text` that would copy a secret (or a section holding one) to another place,
 * as `path: *anchor` descriptions. Redaction works on key paths, so `license: *apikey` would show
 * the API key wherever `license` is shown (`/server-info`); such documents are refused. Aliases
 * used as keys are listed too (there is no legitimate use for them in settings).
 */
export function secretAliases(text: string): string[] {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return [];
  const anchors = new Map<string, { node: Node; path: (string | number)[] }>();
  const found: string[] = [];
  const show = (path: (string | number)[]) => path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[') || '(root)';
  const visit = (node: Node | null | undefined, path: (string | number)[]) => {
    if (!node) return;
    if (isAlias(node)) {
      const source = anchors.get(node.source);
      if (source && holdsSecret(source.node, source.path)) found.push(`${show(path)}: *${node.source}`);
      return;
    }
    if (node.anchor) anchors.set(node.anchor, { node, path });
    if (isMap(node)) {
      for (const pair of node.items) {
        if (isAlias(pair.key)) found.push(`${show(path)}: alias used as a key (*${pair.key.source})`);
        visit(pair.value as Node | null, [...path, isScalar(pair.key) ? String(pair.key.value) : String(pair.key)]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => visit(item as Node | null, [...path, i]));
    }
  };
  visit(doc.contents as Node | null, []);
  return found;
}

/**
 * Every non-empty secret value of a settings object (API key, JWT key, passwords, tokens, webhook
 * URLs …), longest first, for masking wherever text that could contain them is shown (step
 * output, logs, events). User names are left out (they are redacted in the settings views for
 * compatibility but are not secrets), and so are values shorter than 6 characters, which would
 * mask ordinary words.
 */
export function settingsSecretValues(settings: unknown): string[] {
  const out = new Set<string>();
  const walk = (value: unknown, path: (string | number)[]) => {
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, [...path, i]));
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(v, [...path, k]);
      return;
    }
    if (typeof value !== 'string' && typeof value !== 'number') return;
    const text = String(value);
    const last = String(path[path.length - 1] ?? '');
    if (text.length < 6 || /username/i.test(last) || !isSecretPath(path)) return;
    out.add(text);
    // The password inside a connection URL is a secret on its own (it may appear without the URL).
    if (last === 'url') {
      try {
        const password = decodeURIComponent(new URL(text).password);
        if (password.length >= 6) out.add(password);
      } catch {
        // not a URL: the whole value is masked already
      }
    }
  };
  walk(settings, []);
  return [...out].sort((a, b) => b.length - a.length);
}
