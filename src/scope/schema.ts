/**
 * zod schemas of a scope as settings, workflows and the API write it: a mapping with `include` and
 * `exclude` lists, a list of entries (`!` excludes), or a text of lines (the scope-file format).
 * Every entry is checked; all bad entries are reported at once (each as its own issue).
 */
import { z } from 'zod';
import { MAX_SCOPE_ENTRIES, parseScopeSpec, parseScopeText, ScopeParseError, specOf, type ScopeSpec } from './model.js';

const entry = z.union([z.string(), z.number()]).transform((v) => String(v));
const entryList = z.array(entry, { error: 'must be a list of entries' }).max(MAX_SCOPE_ENTRIES);

/** A spec from any accepted form; issues (with paths) for bad entries. */
function toSpec(value: unknown, ctx: z.RefinementCtx): ScopeSpec {
  try {
    if (typeof value === 'string') return specOf(parseScopeText(value, 'scope'));
    if (Array.isArray(value)) return specOf(parseScopeText(value.map(String).join('\n'), 'scope'));
    const v = value as { include?: string[]; exclude?: string[] };
    return specOf(parseScopeSpec({ include: v.include ?? [], exclude: v.exclude ?? [] }, 'scope'));
  } catch (err) {
    if (!(err instanceof ScopeParseError)) throw err;
    for (const i of err.issues) {
      const m = i.path ? /^(include|exclude)\[(\d+)\]$/.exec(i.path) : null;
      const path = m ? [m[1]!, Number(m[2])] : Array.isArray(value) && i.line ? [i.line - 1] : [];
      ctx.addIssue({ code: 'custom', path, message: i.line && typeof value === 'string' ? `line ${i.line}: ${i.message}` : i.message });
    }
    return { include: [], exclude: [] };
  }
}

/** A scope as written anywhere (mapping, list of entries, or lines of text) → `{ include, exclude }`. */
export const scopeSpecSchema = z
  .union(
    [
      z.string().max(8 * 1024 * 1024),
      entryList,
      z.strictObject({ include: entryList.optional(), exclude: entryList.optional() }),
    ],
    { error: 'scope must be a mapping with include/exclude lists, a list of entries, or lines of text' },
  )
  .transform((v, ctx) => toSpec(v, ctx));

/** The `scope:` section of the settings file: a global scope plus scopes per workspace and per org. */
export const settingsScopeSchema = z
  .strictObject({
    include: entryList.default([]),
    exclude: entryList.default([]),
    /** Workspace name → scope (applies to runs and imports into that workspace). */
    workspaces: z.record(z.string(), scopeSpecSchema).default({}),
    /** Org uuid or name → scope (applies to runs and imports of that org's workspaces). */
    orgs: z.record(z.string(), scopeSpecSchema).default({}),
  })
  .superRefine((s, ctx) => {
    toSpec({ include: s.include, exclude: s.exclude }, ctx);
  })
  .prefault({});

export type SettingsScope = z.infer<typeof settingsScopeSchema>;
