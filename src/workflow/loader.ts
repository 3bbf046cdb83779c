/**
 * Loads workflows from disk: lookup, parse, inheritance, validation, with a cache keyed by path
 * that is dropped as soon as the file (or any parent it extends) changes on disk.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { errors, isOsmError, messageOf } from '../errors.js';
import type { ModuleRef, Workflow, WorkflowIssue } from './types.js';
import { checksumOf, parseWorkflowText } from './parse.js';
import { resolveInheritance } from './inherit.js';
import { validateWorkflow } from './validate.js';
import { lintWorkflow, type LintOptions } from './lint.js';
import { formatIssue, formatValidationError, hasErrors } from './wf-issues.js';
import { findWorkflow, looksLikePath, resolveModulePath } from './lookup.js';
import { originOf, setOrigin } from './wf-origin.js';

interface FileStamp {
  path: string;
  mtimeMs: number;
  size: number;
}

interface Inspected {
  workflow?: Workflow;
  issues: WorkflowIssue[];
  stamps: FileStamp[];
}

/** Result of a full check (parse, inheritance, validation and optionally lint), never throwing. */
export interface WorkflowCheck {
  file: string;
  workflow?: Workflow;
  issues: WorkflowIssue[];
}

function stampOf(path: string): FileStamp {
  const st = statSync(path);
  return { path, mtimeMs: st.mtimeMs, size: st.size };
}

function fresh(stamps: FileStamp[]): boolean {
  try {
    return stamps.every((s) => {
      const now = stampOf(s.path);
      return now.mtimeMs === s.mtimeMs && now.size === s.size;
    });
  } catch {
    return false;
  }
}

/** Loads and caches workflows of one workflows folder. */
export class WorkflowLoader {
  readonly workflowsDir: string;
  private readonly cwd: string;
  private readonly cache = new Map<string, Inspected>();
  private readonly rawCache = new Map<string, { stamp: FileStamp; workflow?: Workflow; issues: WorkflowIssue[] }>();

  /** `cwd` anchors relative paths (defaults to the process's current folder). */
  constructor(workflowsDir: string, opts: { cwd?: string } = {}) {
    this.workflowsDir = resolve(workflowsDir);
    this.cwd = opts.cwd ?? process.cwd();
  }

  /** Finds a workflow by name or path and loads it; throws workflowNotFound or workflowInvalid. */
  load(nameOrPath: string): Workflow {
    return this.loadFile(findWorkflow(nameOrPath, this.workflowsDir, this.cwd));
  }

  /** Loads one file (cached until it or a parent changes); throws workflowInvalid listing every error. */
  loadFile(path: string): Workflow {
    const result = this.inspect(path);
    const problems = result.issues.filter((i) => i.severity === 'error');
    if (problems.length > 0 || !result.workflow) {
      throw errors.workflowInvalid(problems.map(formatValidationError).join('\n') || `invalid workflow: ${path}`);
    }
    return result.workflow;
  }

  /** Parses, resolves and validates a file (and lints it when asked) without throwing. */
  check(path: string, lint?: LintOptions | boolean): WorkflowCheck {
    const abs = resolve(this.cwd, path);
    const result = this.inspect(abs);
    const issues = [...result.issues];
    if (result.workflow && !hasErrors(issues)) {
      if (result.workflow.kind === 'flow') issues.push(...this.moduleIssues(result.workflow));
      if (lint) {
        const opts: LintOptions = typeof lint === 'object' ? { ...lint } : {};
        opts.resolveModule ??= (ref) => this.tryModule(ref, result.workflow!);
        issues.push(...lintWorkflow(result.workflow, opts));
      }
    }
    return { file: abs, issues, ...(result.workflow ? { workflow: result.workflow } : {}) };
  }

  /** The module a flow entry runs: inline steps become a synthetic module named after the entry. */
  loadModuleRef(ref: ModuleRef, flow: Workflow): Workflow {
    if (ref.steps && ref.steps.length > 0) return inlineModule(ref, flow);
    if (!ref.path) throw errors.workflowInvalid(`module reference ${ref.name}: path is required (or define inline steps)`);
    const wf = this.loadFile(resolveModulePath(ref.path, this.workflowsDir, this.cwd));
    if (wf.kind !== 'module') throw errors.workflowInvalid(`module reference ${ref.name}: ${ref.path} is a ${wf.kind}, not a module`);
    return wf;
  }

  /** Every module of a flow, loaded, or with the reason it could not be. */
  flowModules(flow: Workflow): { ref: ModuleRef; workflow?: Workflow; error?: string }[] {
    return flow.modules.map((ref) => {
      try {
        return { ref, workflow: this.loadModuleRef(ref, flow) };
      } catch (err) {
        return { ref, error: messageOf(err) };
      }
    });
  }

  /** Steps a run will execute: a module's steps; for a flow the sum over its modules (1 for an unloadable one). */
  stepCount(wf: Workflow): number {
    if (wf.kind === 'module') return wf.steps.length;
    return this.flowModules(wf).reduce((n, m) => n + (m.workflow ? Math.max(m.workflow.steps.length, 1) : 1), 0);
  }

  /** Forgets every cached workflow. */
  clear(): void {
    this.cache.clear();
    this.rawCache.clear();
  }

  private tryModule(ref: ModuleRef, flow: Workflow): Workflow | undefined {
    try {
      return this.loadModuleRef(ref, flow);
    } catch {
      return undefined;
    }
  }

  private moduleIssues(flow: Workflow): WorkflowIssue[] {
    const out: WorkflowIssue[] = [];
    flow.modules.forEach((ref, i) => {
      if (ref.steps?.length || !ref.path) return;
      try {
        this.loadModuleRef(ref, flow);
      } catch (err) {
        const origin = originOf(ref) ?? originOf(flow);
        const issue: WorkflowIssue = { severity: 'error', file: origin?.file ?? flow.file_path, path: `modules[${i}].path`, message: messageOf(err).split('\n').join('; '), rule: 'module-path' };
        const line = origin?.keyLines.path ?? origin?.line;
        if (line !== undefined) issue.line = line;
        out.push(issue);
      }
    });
    return out;
  }

  private inspect(path: string): Inspected {
    const abs = resolve(this.cwd, path);
    const cached = this.cache.get(abs);
    if (cached && fresh(cached.stamps)) return cached;
    const result = this.inspectUncached(abs);
    this.cache.set(abs, result);
    return result;
  }

  private inspectUncached(abs: string): Inspected {
    const stamps: FileStamp[] = [];
    let parsed: { stamp: FileStamp; workflow?: Workflow; issues: WorkflowIssue[] };
    try {
      parsed = this.parseFile(abs);
      stamps.push(parsed.stamp);
    } catch (err) {
      return { issues: [{ severity: 'error', file: abs, path: '', message: messageOf(err), rule: 'read' }], stamps };
    }
    if (!parsed.workflow || hasErrors(parsed.issues)) return { issues: parsed.issues, stamps };
    let wf: Workflow;
    try {
      wf = resolveInheritance(parsed.workflow, (name, childFile) => {
        const parent = this.parseFile(this.findParent(name, childFile));
        stamps.push(parent.stamp);
        if (!parent.workflow || hasErrors(parent.issues)) {
          throw errors.workflowInvalid(`parent ${name}: ${parent.issues.filter((i) => i.severity === 'error').map(formatIssue).join('; ')}`);
        }
        return parent.workflow;
      });
    } catch (err) {
      if (!isOsmError(err)) throw err;
      const origin = originOf(parsed.workflow);
      const issue: WorkflowIssue = { severity: 'error', file: origin?.file ?? abs, path: 'extends', message: err.message.split('\n').join('; '), rule: 'extends' };
      const line = origin?.keyLines.extends ?? origin?.keyLines.override;
      if (line !== undefined) issue.line = line;
      return { issues: [...parsed.issues, issue], stamps };
    }
    return { workflow: wf, issues: [...parsed.issues, ...validateWorkflow(wf)], stamps };
  }

  /** Parent lookup for `extends: X` (reference §1.11). */
  private findParent(name: string, childFile: string): string {
    const dir = childFile ? dirname(childFile) : this.cwd;
    for (const ext of ['.yaml', '.yml']) {
      const candidate = join(dir, `${name}${ext}`);
      if (isFileSafe(candidate)) return candidate;
    }
    if (looksLikePath(name)) {
      const candidate = isAbsolute(name) ? name : resolve(dir, name);
      if (isFileSafe(candidate)) return candidate;
      throw errors.workflowNotFound(name, `parent workflow looked for at ${candidate}`);
    }
    return findWorkflow(name, this.workflowsDir, this.cwd);
  }

  /** Parse one file (cached by mtime; the parsed object is not mutated by inheritance). */
  private parseFile(abs: string): { stamp: FileStamp; workflow?: Workflow; issues: WorkflowIssue[] } {
    // Stat before reading: if the file changes in between, the stale stamp forces a re-parse next time.
    const stamp = stampOf(abs);
    const cached = this.rawCache.get(abs);
    if (cached && cached.stamp.mtimeMs === stamp.mtimeMs && cached.stamp.size === stamp.size) return cached;
    const bytes = readFileSync(abs);
    const entry = { stamp, ...parseWorkflowText(bytes.toString('utf8'), abs) };
    // The checksum is of the bytes on disk, even if they are not valid UTF-8.
    if (entry.workflow) entry.workflow.checksum = checksumOf(bytes);
    this.rawCache.set(abs, entry);
    return entry;
  }
}

function isFileSafe(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A synthetic module for a flow entry with inline `steps`. */
function inlineModule(ref: ModuleRef, flow: Workflow): Workflow {
  const wf: Workflow = {
    kind: 'module',
    name: ref.name,
    description: ref.description ?? '',
    tags: [],
    hidden: true,
    params: [],
    dependencies: { commands: [], files: [], variables: [], target_types: [], functions_conditions: [] },
    reports: [],
    triggers: [],
    preferences: {},
    hooks: { pre_scan_steps: [], post_scan_steps: [] },
    runner: ref.runner ?? 'host',
    runner_config: ref.runner_config ?? {},
    steps: ref.steps ?? [],
    modules: [],
    file_path: '',
    checksum: '',
    raw: '',
  };
  const origin = originOf(ref) ?? originOf(flow);
  if (origin) setOrigin(wf, { file: origin.file, line: origin.line, keyLines: {} });
  return wf;
}
