/** Type conversion functions (reference §10.2 "type_conversion"). */
import type { FnImpl } from './registry.js';
import { asText } from './helpers.js';

/** Strict decimal integer (Go strconv.Atoi of the trimmed text), 0 on failure. */
export function parseIntStrict(v: unknown): number {
  const s = asText(v).trim();
  if (!/^[-+]?\d+$/.test(s)) return 0;
  const n = Number.parseInt(s, 10);
  return Number.isSafeInteger(n) ? n : 0;
}

/** Decimal/scientific float of the trimmed text, 0 on failure. */
export function parseFloatStrict(v: unknown): number {
  const s = asText(v).trim();
  if (/^[-+]?(inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return 0;
  return Number(s);
}

/** The type conversion functions, by snake_case name (aliases come from the catalogue). */
export const typeConversionFunctions: Record<string, FnImpl> = {
  parse_int: (_c, v) => parseIntStrict(v),
  parse_float: (_c, v) => parseFloatStrict(v),
  to_string: (_c, v) => asText(v),
  // JS truthiness on purpose: "false" is true, as in the reference.
  to_boolean: (_c, v) => Boolean(v),
};
