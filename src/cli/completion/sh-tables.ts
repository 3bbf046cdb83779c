/**
 * The completion tables as POSIX-style `case` functions, shared by the bash and zsh scripts
 * (both read the same `case` syntax). With `descriptions`, subcommands and flags print
 * `word:description` lines for zsh's `_describe`.
 */
import type { CompletionTables } from './tables.js';
import { oneLine, sq } from './shell-quote.js';

function described(word: string, description: string, on: boolean): string {
  return on ? `${word.replace(/:/g, '\\:')}:${oneLine(description)}` : word;
}

/** `_osm_subcommands`, `_osm_canonical`, `_osm_flags`, `_osm_flag_value` and `_osm_arg_value`. */
export function caseTables(t: CompletionTables, descriptions: boolean): string[] {
  const globalValued = new Set(t.globalFlags.filter((f) => f.hint).flatMap((f) => f.names));
  const out: string[] = [];
  out.push('# Subcommand names and aliases of a command path.', '_osm_subcommands() {', '  case "$1" in');
  for (const path of t.paths) {
    const subs = t.subcommands.get(path) ?? [];
    if (subs.length) out.push(`    ${sq(path)}) printf '%s\\n' ${subs.map((s) => sq(described(s.word, s.description, descriptions))).join(' ')} ;;`);
  }
  out.push('  esac', '}', '', '# The real name of a subcommand word (aliases resolved); empty when the word is none.', '_osm_canonical() {', '  case "$1|$2" in');
  for (const path of t.paths) {
    for (const s of t.subcommands.get(path) ?? []) out.push(`    ${sq(`${path}|${s.word}`)}) echo ${sq(s.canonical)} ;;`);
  }
  out.push('  esac', '}', '', '# The flags of a command path.', '_osm_flags() {', '  case "$1" in');
  for (const path of t.paths) {
    const words = (t.flags.get(path) ?? []).flatMap((f) => f.names.map((n) => described(n, f.description, descriptions)));
    if (words.length) out.push(`    ${sq(path)}) printf '%s\\n' ${words.map(sq).join(' ')} ;;`);
  }
  out.push('  esac', '}', '', '# What the value of a flag completes to (empty: the flag takes no value).', '_osm_flag_value() {', '  case "$1|$2" in');
  for (const path of t.paths) {
    if (path === '') continue;
    for (const f of t.flags.get(path) ?? []) {
      // A command flag that takes no value must shadow a global flag of the same spelling that does.
      if (!f.hint && !f.names.some((n) => globalValued.has(n))) continue;
      out.push(`    ${f.names.map((n) => sq(`${path}|${n}`)).join('|')}) echo ${sq(f.hint)} ;;`);
    }
  }
  for (const f of t.globalFlags) {
    if (f.hint) out.push(`    ${f.names.map((n) => `*${sq(`|${n}`)}`).join('|')}) echo ${sq(f.hint)} ;;`);
  }
  out.push('  esac', '}', '', '# What the positional argument at an index completes to.', '_osm_arg_value() {', '  case "$1|$2" in');
  for (const path of t.paths) {
    (t.args.get(path) ?? []).forEach((a, i) => {
      if (!a.hint || a.hint === 'free') return;
      out.push(`    ${a.variadic ? `${sq(`${path}|`)}*` : sq(`${path}|${i}`)}) echo ${sq(a.hint)} ;;`);
    });
  }
  out.push('  esac', '}', '');
  return out;
}

/** Script bodies are written as String.raw with `\${` (so `${…}` stays shell, not JS): undo that escape. */
export function unescapeBody(raw: string): string {
  return raw.replace(/\\\$\{/g, '${');
}
