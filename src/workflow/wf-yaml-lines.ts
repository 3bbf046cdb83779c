/**
 * Maps YAML paths (`steps[2].type`) to line numbers using the yaml Document's node ranges, and
 * records the origin of every step, module, param and trigger of a parsed workflow.
 */
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';
import type { ModuleRef, Step } from './types.js';
import type { ParsedWorkflow, ListOverride } from './schema.js';
import { originOf, setOrigin } from './wf-origin.js';

type Seg = string | number;

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

function lineAt(lc: LineCounter, node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range ? lc.linePos(range[0]).line : undefined;
}

/** Line of the deepest node along `path` that exists (a missing key points at its parent). */
export function lineForPath(doc: Document, lc: LineCounter, path: readonly Seg[]): number | undefined {
  let node: unknown = doc.contents;
  let line = lineAt(lc, node);
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(seg));
      if (!pair) break;
      line = lineAt(lc, pair.key) ?? line;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) break;
      line = lineAt(lc, item) ?? line;
      node = item;
    } else {
      break;
    }
  }
  return line;
}

/** Formats a path as `steps[2].type`. */
export function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

function child(node: unknown, seg: Seg): unknown {
  if (isMap(node)) return node.items.find((p) => keyText(p.key) === String(seg))?.value;
  if (isSeq(node) && typeof seg === 'number') return node.items[seg];
  return undefined;
}

function record(target: object | undefined, node: unknown, lc: LineCounter, file: string): void {
  if (!target || !node) return;
  const keyLines: Record<string, number> = {};
  if (isMap(node)) {
    for (const p of node.items) {
      const l = lineAt(lc, p.key);
      if (l !== undefined) keyLines[keyText(p.key)] = l;
    }
  }
  setOrigin(target, { file, line: lineAt(lc, node), keyLines });
}

function walkSteps(steps: Step[] | undefined, node: unknown, lc: LineCounter, file: string): void {
  if (!steps || !isSeq(node)) return;
  steps.forEach((step, i) => walkStep(step, node.items[i], lc, file));
}

function walkStep(step: Step, node: unknown, lc: LineCounter, file: string): void {
  record(step, node, lc, file);
  walkSteps(step.parallel_steps, child(node, 'parallel_steps'), lc, file);
  if (step.step) walkStep(step.step, child(node, 'step'), lc, file);
}

function walkModules(mods: ModuleRef[] | undefined, node: unknown, lc: LineCounter, file: string): void {
  if (!mods || !isSeq(node)) return;
  mods.forEach((m, i) => {
    const n = node.items[i];
    record(m, n, lc, file);
    // The schema leaves unknown keys on the object; the model has no field for them, so move them to the origin.
    const extra = m as ModuleRef & { unknown_keys?: string[] };
    const origin = originOf(m);
    if (extra.unknown_keys && origin) origin.unknownKeys = extra.unknown_keys;
    delete extra.unknown_keys;
    walkSteps(m.steps, child(n, 'steps'), lc, file);
  });
}

function walkList<T extends object>(items: T[], node: unknown, lc: LineCounter, file: string): void {
  if (!isSeq(node)) return;
  items.forEach((item, i) => record(item, node.items[i], lc, file));
}

function walkListOverride<T>(o: ListOverride<T> | undefined, node: unknown, key: 'steps' | 'modules', lc: LineCounter, file: string): void {
  if (!o) return;
  const each = (items: T[], n: unknown) =>
    key === 'steps' ? walkSteps(items as Step[], n, lc, file) : walkModules(items as ModuleRef[], n, lc, file);
  each(o.items, child(node, key));
  each(o.replace, child(node, 'replace'));
}

/** Records file/line origins for the parts of `wf` from the document it was parsed from. */
export function attachOrigins(wf: ParsedWorkflow, doc: Document, lc: LineCounter, file: string): void {
  const root = doc.contents as Node | null;
  record(wf, root, lc, file);
  walkSteps(wf.steps, child(root, 'steps'), lc, file);
  walkModules(wf.modules, child(root, 'modules'), lc, file);
  walkSteps(wf.hooks.pre_scan_steps, child(child(root, 'hooks'), 'pre_scan_steps'), lc, file);
  walkSteps(wf.hooks.post_scan_steps, child(child(root, 'hooks'), 'post_scan_steps'), lc, file);
  walkList(wf.params, child(root, 'params'), lc, file);
  walkList(wf.triggers, child(root, 'triggers'), lc, file);
  walkList(wf.reports, child(root, 'reports'), lc, file);
  const override = child(root, 'override');
  walkListOverride(wf.override?.steps, child(override, 'steps'), 'steps', lc, file);
  walkListOverride(wf.override?.modules, child(override, 'modules'), 'modules', lc, file);
  if (wf.override?.triggers) walkList(wf.override.triggers, child(override, 'triggers'), lc, file);
}
