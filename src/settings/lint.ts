/**
 * Settings checks that are not errors: unknown keys are tolerated (so a reference settings file
 * with extra sections still loads) but reported, so typos like `sever:` do not pass silently.
 */
import type { z } from 'zod';
import { childSchema, schemaKind } from './introspect.js';
import { settingsSchema } from './schema.js';

/** Joins a key path the way users type it in `osm config set` (`notification.webhooks.0.url`). */
export function dottedPath(path: readonly PropertyKey[]): string {
  return path.length ? path.map((p) => String(p)).join('.') : '(root)';
}

/** Every zod issue as `path: message`, joined with `; ` (all issues at once, never just the first). */
export function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${dottedPath(i.path)}: ${i.message}`).join('; ');
}

/** Warnings for keys of a raw (parsed YAML) settings object that the schema does not know. */
export function lintSettings(raw: unknown): string[] {
  const warnings: string[] = [];
  walk(raw, settingsSchema, [], warnings);
  return warnings;
}

function walk(value: unknown, schema: z.ZodType, path: (string | number)[], out: string[]): void {
  if (value === null || typeof value !== 'object') return;
  const kind = schemaKind(schema);
  if (kind.kind === 'array') {
    if (!Array.isArray(value)) return;
    value.forEach((item, i) => {
      const child = childSchema(schema, i);
      if (child) walk(item, child, [...path, i], out);
    });
    return;
  }
  if (kind.kind !== 'object' && kind.kind !== 'record') return;
  if (Array.isArray(value)) return;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const sub = childSchema(schema, key);
    if (!sub) {
      out.push(`unknown key ignored: ${dottedPath([...path, key])}`);
      continue;
    }
    walk(child, sub, [...path, key], out);
  }
}
