/**
 * The binary registry JSON (server-api §8.1): an object whose keys are binary names; keys that
 * start with `_` are metadata (`_last_update_at`). Every entry is validated and every problem is
 * reported at once; parse errors never quote the input, because the input may be a file the
 * caller should not be able to read through our error messages.
 */
import { z } from 'zod';

const str = z.string();
const archMap = z.record(z.string(), z.string());

export const registryEntrySchema = z.looseObject({
  desc: str.optional(),
  repo_link: str.optional(),
  version: str.optional(),
  tags: z.array(z.string()).optional(),
  'package-manager': str.optional(),
  'valide-command': str.optional(),
  nix_package: str.optional(),
  go_install: str.optional(),
  linux: archMap.optional(),
  darwin: archMap.optional(),
  windows: archMap.optional(),
  'command-linux': archMap.optional(),
  'command-darwin': archMap.optional(),
  'command-dual': archMap.optional(),
  'multi-commands-linux': z.array(z.string()).optional(),
  'multi-commands-darwin': z.array(z.string()).optional(),
});

export type RegistryEntry = z.infer<typeof registryEntrySchema>;

export interface Registry {
  /** Binary name → entry, in file order. */
  entries: Map<string, RegistryEntry>;
  /** `_last_update_at` when present. */
  lastUpdateAt?: string;
}

/** Keys copied into the `registry-info` answer (omitted when empty), in the reference's order. */
export const RESPONSE_KEYS = [
  'desc', 'repo_link', 'version', 'tags', 'valide-command', 'linux', 'darwin', 'windows',
  'command-linux', 'command-darwin', 'command-dual', 'multi-commands-linux', 'multi-commands-darwin',
] as const;

/** A parse failure; the message is safe to show (no input is quoted). */
export class RegistryParseError extends Error {}

const MAX_ISSUES = 20;

/** Parses registry JSON text; throws RegistryParseError naming every invalid entry field. */
export function parseRegistryText(text: string): Registry {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new RegistryParseError(`failed to parse registry JSON: ${jsonErrorWhere(text, err)}`);
  }
  return parseRegistryValue(raw);
}

/** Validates an already-parsed registry document (see parseRegistryText). */
export function parseRegistryValue(raw: unknown): Registry {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new RegistryParseError('failed to parse registry JSON: the top level must be an object of binary name → entry');
  }
  const entries = new Map<string, RegistryEntry>();
  const issues: string[] = [];
  let lastUpdateAt: string | undefined;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (name.startsWith('_')) {
      if (name === '_last_update_at' && typeof value === 'string') lastUpdateAt = value;
      continue;
    }
    const r = registryEntrySchema.safeParse(value);
    if (!r.success) {
      for (const i of r.error.issues) issues.push(`${[name, ...i.path.map(String)].join('.')}: ${i.message}`);
      continue;
    }
    entries.set(name, r.data);
  }
  if (issues.length > 0) {
    const more = issues.length > MAX_ISSUES ? `; … and ${issues.length - MAX_ISSUES} more` : '';
    throw new RegistryParseError(`failed to parse registry JSON: ${issues.slice(0, MAX_ISSUES).join('; ')}${more}`);
  }
  return { entries, ...(lastUpdateAt ? { lastUpdateAt } : {}) };
}

/** "invalid JSON at line L column C" from a JSON.parse error, without the snippet V8 includes. */
function jsonErrorWhere(text: string, err: unknown): string {
  const m = /position (\d+)/.exec(err instanceof Error ? err.message : '');
  if (!m) return 'invalid JSON';
  const pos = Math.min(Number(m[1]), text.length);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `invalid JSON at line ${line} column ${column}`;
}

/** True when the entry is tagged `optional`. */
export function isOptional(entry: RegistryEntry): boolean {
  return (entry.tags ?? []).some((t) => t.toLowerCase() === 'optional');
}

/** The entry as shown by `registry-info`: known keys only, empty ones omitted. */
export function entryForResponse(entry: RegistryEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of RESPONSE_KEYS) {
    const v = entry[key];
    if (v === undefined || v === '') continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[key] = v;
  }
  return out;
}
