/**
 * Secret masking for everything the plan shows (dry-run output, workflow detail): values of
 * variables whose NAME looks secret are replaced by `[REDACTED]`, and wherever such a value was
 * rendered into a command it is masked too (the way CI systems mask secrets in logs).
 */

export const REDACTED = '[REDACTED]';
const SECRET_KEY_RE = /(password|passwd|secret|token|api[_-]?key|apikey|credential|private[_-]?key|auth[_-]?key|access[_-]?key|webhook)/i;
// Masking very short values would shred ordinary text ("1", "on").
const MIN_MASK_LENGTH = 4;

/** True when a variable name looks like it holds a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY_RE.test(key);
}

/** String values of secret-looking variables (top level and nested), longest first. */
export function secretValues(vars: Record<string, unknown>): string[] {
  const found = new Set<string>();
  const visit = (value: unknown, secret: boolean, depth: number): void => {
    if (depth > 8 || value === null || value === undefined) return;
    if (typeof value === 'string' || typeof value === 'number') {
      const text = String(value);
      if (secret && text.length >= MIN_MASK_LENGTH) found.add(text);
      return;
    }
    if (typeof value === 'object') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) visit(v, secret || isSecretKey(k), depth + 1);
    }
  };
  visit(vars, false, 0);
  return [...found].sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of each secret in `text` by `[REDACTED]`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** Copy of `vars` with secret-looking entries (at any depth) replaced by `[REDACTED]`. */
export function redactVariables(vars: Record<string, unknown>): Record<string, unknown> {
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > 8 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = isSecretKey(k) && v !== '' && v !== undefined && v !== null ? REDACTED : walk(v, depth + 1);
    }
    return out;
  };
  return walk(vars, 0) as Record<string, unknown>;
}
