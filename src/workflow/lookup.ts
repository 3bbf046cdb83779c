/**
 * Finding workflow files (reference workflow-engine §1.13 and §1.10): by name through a recursive,
 * lexically ordered walk of the workflows folder, or by path. A miss explains where we looked and
 * suggests near names (field-notes #8: "workflow not found" after an upgrade left users stuck).
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, extname, isAbsolute, join, resolve } from 'node:path';
import { errors } from '../errors.js';
import { isWorkflowYaml } from './parse.js';

const YAML_EXT = /\.ya?ml$/i;
/** Cap on the bytes read when sniffing whether a file is a workflow (a workflow is small text). */
const SNIFF_LIMIT = 4 * 1024 * 1024;

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * What sniffing found per file, keyed by the stat that was current then: a lookup by name walks the
 * whole folder (a worker does it for each task), and reading and parsing the head of every YAML
 * file each time cost milliseconds per lookup. A file whose inode, size, mtime or ctime changed
 * is read again, so an edit, a replacement or a rename onto the path is always seen.
 */
const sniffed = new Map<string, { sig: string; workflow: boolean }>();
const SNIFF_MEMO_MAX = 50_000;

function sniff(path: string, st: Stats): boolean {
  if (!st.isFile() || st.size > SNIFF_LIMIT) return false;
  const sig = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const known = sniffed.get(path);
  if (known?.sig === sig) return known.workflow;
  let workflow: boolean;
  try {
    workflow = isWorkflowYaml(readFileSync(path, 'utf8'));
  } catch {
    return false;
  }
  if (sniffed.size >= SNIFF_MEMO_MAX) sniffed.clear();
  sniffed.set(path, { sig, workflow });
  return workflow;
}

/**
 * Visits the YAML files under `dir`: recursive, lexical order per folder (like Go's
 * filepath.Walk), hidden segments skipped, each real folder once (symlinked folders can form
 * loops). `visit` returning true stops the walk.
 */
function walkYamlFiles(dir: string, visit: (full: string, name: string, st: Stats) => boolean | void): void {
  const seenDirs = new Set<string>();
  let stopped = false;
  const walk = (folder: string) => {
    let real: string;
    try {
      real = realpathSync(folder);
    } catch {
      return;
    }
    if (seenDirs.has(real)) return;
    seenDirs.add(real);
    let names: string[];
    try {
      names = readdirSync(folder).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (stopped) return;
      if (name.startsWith('.')) continue;
      const full = join(folder, name);
      let st;
      try {
        st = statSync(full);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(full);
      else if (st.isFile() && YAML_EXT.test(name) && visit(full, name, st) === true) stopped = true;
    }
  };
  walk(resolve(dir));
}

/** Every workflow file under `dir`, in walk order. */
export function listWorkflowFiles(dir: string): string[] {
  const out: string[] = [];
  walkYamlFiles(dir, (full, _name, st) => {
    if (sniff(full, st)) out.push(full);
  });
  return out;
}

/** True when a workflow reference is written as a path rather than a name. */
export function looksLikePath(name: string): boolean {
  return name.includes('/') || name.includes('\\') || YAML_EXT.test(name);
}

function stem(file: string): string {
  return basename(file, extname(file));
}

/** Resolves a workflow name or path to an absolute file path; throws workflowNotFound with hints. */
export function findWorkflow(name: string, workflowsDir: string, cwd: string = process.cwd()): string {
  const wanted = name.trim();
  if (wanted === '') throw errors.workflowNotFound(name, 'give a workflow name or a path to a YAML file');
  if (looksLikePath(wanted)) return resolvePath(wanted, workflowsDir, cwd, false);
  const files = listWorkflowFiles(workflowsDir);
  for (const candidate of [wanted, `${wanted}-flow`, `${wanted}-module`]) {
    const hit = files.find((f) => stem(f) === candidate);
    if (hit) return hit;
  }
  throw errors.workflowNotFound(wanted, notFoundHint(wanted, workflowsDir, files.map(stem)));
}

/**
 * Name-only lookup for untrusted callers (HTTP API): a name that looks like a path is refused
 * instead of being read from an arbitrary location.
 */
export function findWorkflowByName(name: string, workflowsDir: string): string {
  if (looksLikePath(name) || name.includes('\0')) {
    throw errors.workflowNotFound(name, 'give a workflow name, not a path');
  }
  return findWorkflow(name, workflowsDir, workflowsDir);
}

/** Resolves a flow's `modules[].path` (reference §1.10, plus trying `.yaml`/`.yml` when the exact path is missing). */
export function resolveModulePath(path: string, workflowsDir: string, cwd: string = process.cwd()): string {
  return resolvePath(path.trim(), workflowsDir, cwd, true);
}

function resolvePath(p: string, workflowsDir: string, cwd: string, guessExt: boolean): string {
  const withExt = (base: string) => (guessExt && !YAML_EXT.test(base) ? [base, `${base}.yaml`, `${base}.yml`] : [base]);
  const tried: string[] = [];
  const pick = (bases: string[]) => {
    for (const c of bases) {
      tried.push(c);
      if (isFile(c)) return c;
    }
    return undefined;
  };
  if (isAbsolute(p)) {
    const hit = pick(withExt(p));
    if (hit) return hit;
  } else {
    const inCwd = resolve(cwd, p);
    const exact = pick([inCwd]);
    if (exact) return exact;
    if (p.startsWith('./') || p.startsWith('../')) {
      const hit = pick(withExt(inCwd).slice(1));
      if (hit) return hit;
    } else {
      const hit = pick(withExt(resolve(workflowsDir, p)));
      if (hit) return hit;
    }
  }
  throw errors.workflowNotFound(p, `looked for: ${tried.join(', ')}`);
}

/** Levenshtein distance (small strings only). */
function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** Up to 3 names close to `wanted` (edit distance or substring), best first. */
export function nearMisses(wanted: string, names: string[], limit = 3): string[] {
  const w = wanted.toLowerCase();
  const scored = [...new Set(names)]
    .map((n) => {
      const l = n.toLowerCase();
      const d = distance(w, l);
      const sub = l.includes(w) || w.includes(l);
      return { n, score: sub ? Math.min(d, 1) : d, ok: sub || d <= Math.max(2, Math.floor(w.length / 3)) };
    })
    .filter((s) => s.ok)
    .sort((a, b) => a.score - b.score || a.n.localeCompare(b.n));
  return scored.slice(0, limit).map((s) => s.n);
}

/** A YAML file named `wanted` under `dir` that the `kind:` sniff rejected (first in walk order), if any. */
function nonWorkflowNamed(wanted: string, dir: string): string | undefined {
  let found: string | undefined;
  let budget = 20_000;
  walkYamlFiles(dir, (full, name) => {
    if (stem(name) === wanted) found = full;
    return found !== undefined || --budget < 0;
  });
  return found;
}

function notFoundHint(wanted: string, workflowsDir: string, names: string[]): string {
  const lines = [`searched ${resolve(workflowsDir)} (${names.length} workflow file${names.length === 1 ? '' : 's'}${existsSync(workflowsDir) ? '' : ', folder does not exist'})`];
  const stray = nonWorkflowNamed(wanted, workflowsDir);
  if (stray) lines.push(`${stray} has no 'kind: module' or 'kind: flow' line at column 0, so it is not a workflow (an Osmedeus v4 file?)`);
  const near = nearMisses(wanted, names);
  if (near.length) lines.push(`did you mean: ${near.join(', ')}?`);
  lines.push("run 'osm workflow list' to see the available workflows");
  return lines.join('\n');
}
