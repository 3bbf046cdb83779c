/**
 * Walks the settings schema by key path, so `config set` can type a raw value and the linter can
 * tell known keys from unknown ones without a second, hand-kept list of fields.
 */
import type { z } from 'zod';
import { settingsSchema } from './schema.js';

type AnySchema = z.ZodType;
interface Def {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  out?: AnySchema;
  shape?: Record<string, AnySchema>;
  valueType?: AnySchema;
  element?: AnySchema;
  options?: AnySchema[];
  entries?: Record<string, string>;
}

const defOf = (s: AnySchema): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Strips default/prefault/optional/nullable/pipe wrappers down to the schema that checks the value. */
export function unwrapSchema(schema: AnySchema): AnySchema {
  let s = schema;
  for (;;) {
    const d = defOf(s);
    if (d.innerType && ['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch'].includes(d.type)) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return s;
  }
}

/** The kind of container or leaf a schema describes, as far as editing needs to know. */
export type SchemaKind =
  | { kind: 'object'; keys: string[] }
  | { kind: 'record' }
  | { kind: 'array' }
  | { kind: 'leaf'; types: LeafType[]; values?: string[] };
export type LeafType = 'string' | 'number' | 'int' | 'boolean';

/** Describes `schema` (after unwrapping). */
export function schemaKind(schema: AnySchema): SchemaKind {
  const s = unwrapSchema(schema);
  const d = defOf(s);
  if (d.type === 'object') return { kind: 'object', keys: Object.keys(d.shape ?? {}) };
  if (d.type === 'record') return { kind: 'record' };
  if (d.type === 'array') return { kind: 'array' };
  return { kind: 'leaf', ...leafTypes(s) };
}

function leafTypes(s: AnySchema): { types: LeafType[]; values?: string[] } {
  const d = defOf(s);
  switch (d.type) {
    case 'number':
      return { types: [(s as unknown as { isInt?: boolean }).isInt ? 'int' : 'number'] };
    case 'boolean':
      return { types: ['boolean'] };
    case 'enum':
      return { types: ['string'], values: Object.values(d.entries ?? {}) };
    case 'union': {
      const types = new Set<LeafType>();
      for (const opt of d.options ?? []) for (const t of leafTypes(unwrapSchema(opt)).types) types.add(t);
      return { types: [...types] };
    }
    default:
      return { types: ['string'] };
  }
}

/** The child schema for one path segment, or undefined when the segment is not part of the schema. */
export function childSchema(schema: AnySchema, seg: string | number): AnySchema | undefined {
  const s = unwrapSchema(schema);
  const d = defOf(s);
  // Own keys only: `constructor` or `__proto__` is an unknown key, not Object.prototype's member.
  if (d.type === 'object') return typeof seg === 'string' && d.shape && Object.hasOwn(d.shape, seg) ? d.shape[seg] : undefined;
  if (d.type === 'record') return d.valueType;
  if (d.type === 'array') return typeof seg === 'number' ? d.element : undefined;
  return undefined;
}

/**
 * The schema at `path` inside the settings schema, plus how far the walk got: `at` is the index
 * of the first segment the schema does not know (or path.length when all are known).
 */
export function schemaAt(path: (string | number)[], root: AnySchema = settingsSchema): { schema?: AnySchema; at: number } {
  let s: AnySchema = root;
  for (let i = 0; i < path.length; i++) {
    const next = childSchema(s, path[i]!);
    if (!next) return { schema: undefined, at: i };
    s = next;
  }
  return { schema: s, at: path.length };
}
