/**
 * Topic matching of event triggers (reference §5.2): an empty pattern matches every topic, a
 * pattern without `*`, `?` or `[` must equal the topic, anything else is a glob with Go's
 * path.Match rules — `*` any run of characters except `/`, `?` one such character, `[...]` a
 * class (`[^...]`/`[!...]` negated, `a-z` ranges), `\` escapes. A malformed pattern matches nothing.
 */

const cache = new Map<string, RegExp | null>();
const CACHE_LIMIT = 1000;

/** True when `pattern` uses glob syntax. */
export function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

function escapeRe(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}

/** Compiles a glob to an anchored regular expression, or null when it is malformed. */
export function globToRegExp(pattern: string): RegExp | null {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === '*') {
      out += '[^/]*';
      i++;
    } else if (ch === '?') {
      out += '[^/]';
      i++;
    } else if (ch === '\\') {
      if (i + 1 >= pattern.length) return null;
      out += escapeRe(pattern[i + 1]!);
      i += 2;
    } else if (ch === '[') {
      let j = i + 1;
      let negate = false;
      if (pattern[j] === '^' || pattern[j] === '!') {
        negate = true;
        j++;
      }
      let cls = '';
      let first = true;
      while (j < pattern.length && (pattern[j] !== ']' || first)) {
        first = false;
        let lo = pattern[j]!;
        if (lo === '\\') {
          if (j + 1 >= pattern.length) return null;
          lo = pattern[++j]!;
        }
        j++;
        if (pattern[j] === '-' && j + 1 < pattern.length && pattern[j + 1] !== ']') {
          let hi = pattern[j + 1]!;
          j += 2;
          if (hi === '\\') {
            if (j >= pattern.length) return null;
            hi = pattern[j++]!;
          }
          if (hi < lo) return null;
          cls += `${escapeRe(lo)}-${escapeRe(hi)}`;
        } else {
          cls += escapeRe(lo);
        }
      }
      if (j >= pattern.length || cls === '') return null; // unclosed or empty class
      // A class never matches the separator, as in path.Match.
      out += negate ? `[^/${cls}]` : `(?!/)[${cls}]`;
      i = j + 1;
    } else {
      out += escapeRe(ch);
      i++;
    }
  }
  try {
    return new RegExp(`^${out}$`, 's');
  } catch {
    return null;
  }
}

/** True when an event topic matches a trigger's topic pattern. */
export function topicMatches(pattern: string | undefined, topic: string): boolean {
  const p = (pattern ?? '').trim();
  if (p === '') return true;
  if (!isGlob(p)) return p === topic;
  let re = cache.get(p);
  if (re === undefined) {
    re = globToRegExp(p);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(p, re);
  }
  return re !== null && re.test(topic);
}
