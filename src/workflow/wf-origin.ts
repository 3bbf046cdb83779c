/**
 * Where each part of a workflow came from (file and line), kept beside the model in a WeakMap so
 * the model stays plain data. After inheritance a step may come from the parent's file; tracking
 * origins per object lets validate/lint point at the right file and line either way.
 */

export interface NodeOrigin {
  file: string;
  /** Line of the node itself (1-based). */
  line?: number;
  /** Line of each key of a mapping node. */
  keyLines: Record<string, number>;
  /** Top-level keys the linter should report (unknown keys of the root). */
  unknownKeys?: string[];
  /** Top-level keys of a child that `extends` ignores (reference §1.11). */
  ignoredKeys?: string[];
}

const origins = new WeakMap<object, NodeOrigin>();

/** Records where `node` was written. */
export function setOrigin(node: object, origin: NodeOrigin): void {
  origins.set(node, origin);
}

/** Where `node` was written, if known. */
export function originOf(node: object | undefined): NodeOrigin | undefined {
  return node ? origins.get(node) : undefined;
}

/** Line of `key` inside `node` (falls back to the node's own line). */
export function lineOf(node: object | undefined, key?: string): number | undefined {
  const o = originOf(node);
  if (!o) return undefined;
  return (key !== undefined ? o.keyLines[key] : undefined) ?? o.line;
}

/** Deep copy of plain data (objects and arrays) that carries the origins over to the copies. */
export function cloneTracked<T>(value: T): T {
  if (Array.isArray(value)) {
    const copy = value.map((v) => cloneTracked(v));
    const o = origins.get(value);
    if (o) origins.set(copy, o);
    return copy as T;
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) copy[k] = cloneTracked(v);
    const o = origins.get(value as object);
    if (o) origins.set(copy, o);
    return copy as T;
  }
  return value;
}
