/**
 * A scope: include and exclude rules, read from a scope file (one entry a line, `!` excludes, `#`
 * comments), a YAML file or mapping with `include:` / `exclude:` lists, or an API object. Several
 * scopes (settings, workspace, workflow, run) form a ScopeSet: a value is in scope only when every
 * layer admits it — each layer can only narrow. Within a layer, exclude wins over include, and an
 * empty include list means "everything not excluded".
 */
import { readFileSync, statSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import { parseRule, ruleMatches, type ScopeRule } from './rules.js';
import { networkTokens, parseValue, type ScopeValue } from './value.js';

/** The serialisable form of a scope (what run options, settings and workflows store). */
export interface ScopeSpec {
  include: string[];
  exclude: string[];
}

export interface ScopeIssue {
  /** 1-based line in the file (0 when unknown). */
  line: number;
  /** Where the entry was (e.g. `include[2]`) when it came from a list. */
  path?: string;
  message: string;
}

/** Every invalid entry of a scope, at once. */
export class ScopeParseError extends Error {
  constructor(
    readonly source: string,
    readonly issues: ScopeIssue[],
  ) {
    super(`invalid scope${source ? ` (${source})` : ''}: ${issues.map((i) => `${i.line ? `line ${i.line}: ` : i.path ? `${i.path}: ` : ''}${i.message}`).join('; ')}`);
    this.name = 'ScopeParseError';
  }
}

export interface ScopeLayer {
  /** `settings`, `workspace:<name>`, `workflow:<name>`, `run` … */
  name: string;
  include: ScopeRule[];
  exclude: ScopeRule[];
}

export const MAX_SCOPE_ENTRIES = 100_000;
export const MAX_SCOPE_FILE_BYTES = 8 * 1024 * 1024;

function collect(entries: { text: string; line: number; path?: string; exclude: boolean }[], source: string): Omit<ScopeLayer, 'name'> {
  const include: ScopeRule[] = [];
  const exclude: ScopeRule[] = [];
  const issues: ScopeIssue[] = [];
  if (entries.length > MAX_SCOPE_ENTRIES) throw new ScopeParseError(source, [{ line: 0, message: `more than ${MAX_SCOPE_ENTRIES} entries` }]);
  for (const e of entries) {
    try {
      (e.exclude ? exclude : include).push(parseRule(e.text, e.line));
    } catch (err) {
      issues.push({ line: e.line, ...(e.path ? { path: e.path } : {}), message: (err as Error).message });
    }
  }
  if (issues.length) throw new ScopeParseError(source, issues);
  return { include, exclude };
}

/** Whether a text is the YAML form (its first entry line is `include:` or `exclude:`). */
function looksLikeYaml(text: string): boolean {
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    return /^(include|exclude)\s*:/.test(t) || t === '---';
  }
  return false;
}

function yamlEntries(text: string, source: string) {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length) {
    throw new ScopeParseError(source, doc.errors.map((e) => ({ line: e.linePos?.[0]?.line ?? 0, message: e.message.split('\n')[0]! })));
  }
  const issues: ScopeIssue[] = [];
  const entries: { text: string; line: number; path: string; exclude: boolean }[] = [];
  const root = doc.contents;
  if (root !== null && !isMap(root)) throw new ScopeParseError(source, [{ line: 1, message: 'a YAML scope must be a mapping with include: and exclude: lists' }]);
  for (const pair of root?.items ?? []) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const keyLine = pair.key && isScalar(pair.key) && pair.key.range ? lc.linePos(pair.key.range[0]).line : 0;
    if (key !== 'include' && key !== 'exclude') {
      issues.push({ line: keyLine, message: `unknown key ${JSON.stringify(key)} (only include and exclude)` });
      continue;
    }
    const v = pair.value;
    if (v === null || (isScalar(v) && (v.value === null || v.value === ''))) continue;
    if (!isSeq(v)) {
      issues.push({ line: keyLine, message: `${key} must be a list` });
      continue;
    }
    v.items.forEach((item, i) => {
      const line = item && typeof item === 'object' && 'range' in item && item.range ? lc.linePos((item.range as unknown as number[])[0]!).line : keyLine;
      if (!isScalar(item) || (typeof item.value !== 'string' && typeof item.value !== 'number')) {
        issues.push({ line, path: `${key}[${i}]`, message: 'must be a string' });
        return;
      }
      let t = String(item.value).trim();
      if (t.startsWith('!')) {
        if (key === 'include') {
          issues.push({ line, path: `${key}[${i}]`, message: 'a "!" entry belongs in the exclude list' });
          return;
        }
        t = t.slice(1).trim();
      }
      entries.push({ text: t, line, path: `${key}[${i}]`, exclude: key === 'exclude' });
    });
  }
  if (issues.length) {
    // Report the entry problems too, all at once.
    try {
      collect(entries, source);
    } catch (err) {
      if (err instanceof ScopeParseError) issues.push(...err.issues);
    }
    issues.sort((a, b) => a.line - b.line);
    throw new ScopeParseError(source, issues);
  }
  return entries;
}

/** Entries of the line format: one a line, `!` excludes, `#` comments (whole line or after a space), blanks ignored. */
function lineEntries(text: string) {
  const entries: { text: string; line: number; exclude: boolean }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    let t = raw.trim();
    if (!t || t.startsWith('#')) return;
    const hash = t.search(/\s#/);
    if (hash >= 0) t = t.slice(0, hash).trim();
    let exclude = false;
    if (t.startsWith('!')) {
      exclude = true;
      t = t.slice(1).trim();
    }
    entries.push({ text: t, line: i + 1, exclude });
  });
  return entries;
}

/** A scope from text: the line format, or YAML when the text starts with `include:` / `exclude:`. */
export function parseScopeText(text: string, name: string, source = name): ScopeLayer {
  const entries = looksLikeYaml(text) ? yamlEntries(text, source) : lineEntries(text);
  return { name, ...collect(entries, source) };
}

/** A scope file (line format or YAML). */
export function readScopeFile(path: string, name = 'run'): ScopeLayer {
  let text: string;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > MAX_SCOPE_FILE_BYTES) throw new Error(`larger than ${MAX_SCOPE_FILE_BYTES / 1024 / 1024} MB`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ScopeParseError(path, [{ line: 0, message: `cannot read scope file: ${(err as Error).message}` }]);
  }
  return parseScopeText(text, name, path);
}

/** A scope from a spec object (`{ include, exclude }` lists; `!` entries of include go to exclude). */
export function parseScopeSpec(spec: Partial<ScopeSpec> | undefined, name: string, source = name): ScopeLayer {
  const entries: { text: string; line: number; path: string; exclude: boolean }[] = [];
  (spec?.include ?? []).forEach((t, i) => {
    const s = String(t).trim();
    entries.push(s.startsWith('!') ? { text: s.slice(1), line: 0, path: `include[${i}]`, exclude: true } : { text: s, line: 0, path: `include[${i}]`, exclude: false });
  });
  (spec?.exclude ?? []).forEach((t, i) => {
    const s = String(t).trim();
    entries.push({ text: s.startsWith('!') ? s.slice(1) : s, line: 0, path: `exclude[${i}]`, exclude: true });
  });
  return { name, ...collect(entries, source) };
}

/** The spec (entry texts) of a layer, e.g. to store it with a run. */
export function specOf(layer: Omit<ScopeLayer, 'name'>): ScopeSpec {
  return { include: layer.include.map((r) => r.text), exclude: layer.exclude.map((r) => r.text) };
}

export function isEmptyLayer(layer: Omit<ScopeLayer, 'name'>): boolean {
  return layer.include.length === 0 && layer.exclude.length === 0;
}

export interface RuleRef {
  text: string;
  line: number;
  list: 'include' | 'exclude';
}

export interface LayerDecision {
  layer: string;
  in_scope: boolean;
  /** `excluded`, `included`, `not included`, `no include list`. */
  reason: 'excluded' | 'included' | 'not included' | 'no include list';
  rule?: RuleRef;
}

export interface ScopeDecision {
  value: string;
  /** How the value was read (absent: it does not read as a host, IP, CIDR or URL). */
  parsed?: { kind: ScopeValue['kind']; host: string; port?: number };
  in_scope: boolean;
  /** One line for people. */
  explanation: string;
  /** The layer that decided (the first that refused, else the last that admitted). */
  layer?: string;
  rule?: RuleRef;
  layers: LayerDecision[];
}

function refOf(rule: ScopeRule, list: 'include' | 'exclude'): RuleRef {
  return { text: rule.text, line: rule.line, list };
}

export function decideLayer(layer: ScopeLayer, v: ScopeValue): LayerDecision {
  for (const r of layer.exclude) if (ruleMatches(r, v, 'exclude')) return { layer: layer.name, in_scope: false, reason: 'excluded', rule: refOf(r, 'exclude') };
  if (layer.include.length === 0) return { layer: layer.name, in_scope: true, reason: 'no include list' };
  for (const r of layer.include) if (ruleMatches(r, v, 'include')) return { layer: layer.name, in_scope: true, reason: 'included', rule: refOf(r, 'include') };
  return { layer: layer.name, in_scope: false, reason: 'not included' };
}

/** Drop counts of a run or an import: total and by where the values came from. */
export interface ScopeCounts {
  dropped: number;
  by_source: Record<string, number>;
  /** The first dropped values (at most 20), to show what was dropped. */
  samples: { source: string; value: string }[];
}

export function emptyCounts(): ScopeCounts {
  return { dropped: 0, by_source: {}, samples: [] };
}

export function countDrop(c: ScopeCounts, source: string, value: string): void {
  c.dropped++;
  c.by_source[source] = (c.by_source[source] ?? 0) + 1;
  if (c.samples.length < 20) c.samples.push({ source, value: value.length > 200 ? `${value.slice(0, 200)}…` : value });
}

/** The layers in force for one run or import; empty layers are left out. */
export class ScopeSet {
  readonly layers: ScopeLayer[];

  constructor(layers: ScopeLayer[]) {
    this.layers = layers.filter((l) => !isEmptyLayer(l));
  }

  get empty(): boolean {
    return this.layers.length === 0;
  }

  /** The decision for one parsed value. */
  decideValue(raw: string, v: ScopeValue): ScopeDecision {
    const layers: LayerDecision[] = [];
    const parsed = { kind: v.kind, host: v.host, ...(v.port !== undefined ? { port: v.port } : {}) };
    for (const layer of this.layers) {
      const d = decideLayer(layer, v);
      layers.push(d);
      if (!d.in_scope) {
        const why = d.reason === 'excluded' ? `excluded by "${d.rule!.text}"${d.rule!.line ? ` (line ${d.rule!.line})` : ''}` : 'matched by no include entry';
        return { value: raw, parsed, in_scope: false, explanation: `out of scope: ${why} in the ${d.layer} scope`, layer: d.layer, ...(d.rule ? { rule: d.rule } : {}), layers };
      }
    }
    const last = layers[layers.length - 1];
    if (!last) return { value: raw, parsed, in_scope: true, explanation: 'in scope: no scope is configured', layers };
    const includes = layers.filter((d) => d.rule).map((d) => `"${d.rule!.text}" (${d.layer})`);
    return {
      value: raw,
      parsed,
      in_scope: true,
      explanation: `in scope: ${includes.length ? `included by ${includes.join(', ')}` : 'no include list'}${layers.some((d) => d.reason === 'no include list') && includes.length ? '; other layers have no include list' : ''}`,
      layer: last.layer,
      ...(last.rule ? { rule: last.rule } : {}),
      layers,
    };
  }

  /**
   * The decision for a value as a whole (a target, `osm scope check`): a value that does not read
   * as a host, IP, CIDR or URL is out of scope whenever a scope is configured.
   */
  decide(raw: string): ScopeDecision {
    const v = parseValue(raw);
    if (!v) {
      if (this.empty) return { value: raw, in_scope: true, explanation: 'in scope: no scope is configured', layers: [] };
      return { value: raw, in_scope: false, explanation: 'out of scope: not a host, IP address, CIDR range or URL, so it cannot be checked', layers: [] };
    }
    return this.decideValue(raw, v);
  }

  /**
   * Whether an item (a loop item, an imported value) may pass: every token of it that reads as a
   * network value (see networkTokens) must be in scope; an item without one passes.
   */
  admitsItem(item: string): boolean {
    if (this.empty) return true;
    for (const v of networkTokens(item)) if (!this.decideValue(v.raw, v).in_scope) return false;
    return true;
  }
}
