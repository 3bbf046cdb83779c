/**
 * The fish completion script, generated from the command tree. fish completes declaratively
 * (`complete -c osm -n CONDITION …`); the conditions ask `__osm_state` for the command path and
 * the number of positional words before the cursor, computed from the same tables as bash.
 */
import type { CommandSpec } from './spec.js';
import { completionTables, type CompletionTables } from './tables.js';
import { fishQuote as q, oneLine } from './shell-quote.js';
import { BASE_FLAGS } from './bash.js';

/** `complete` arguments that make a flag's or argument's value complete as its hint says. */
function valueArgs(hint: string): string {
  if (hint === '') return '';
  if (hint === 'free') return ' -r -f';
  if (hint === 'file') return ' -r -F';
  if (hint === 'dir') return ` -r -f -a '(__fish_complete_directories)'`;
  if (hint.startsWith('choices:')) return ` -r -f -a ${q(hint.slice('choices:'.length))}`;
  const src = hint.slice('dyn:'.length).replace(/:files$/, '');
  return ` -r ${hint.endsWith(':files') ? '-F' : '-f'} -a ${q(`(__osm_dynamic ${src})`)}`;
}

function flagLine(cond: string | undefined, names: string[], description: string, hint: string): string {
  const spell = names.map((n) => (n.startsWith('--') ? ` -l ${q(n.slice(2))}` : ` -s ${q(n.slice(1))}`)).join('');
  return `complete -c osm${cond ? ` -n ${q(cond)}` : ''}${spell}${valueArgs(hint)} -d ${q(oneLine(description))}`;
}

function tables(t: CompletionTables): string[] {
  const out: string[] = ['# The real name of a subcommand word (aliases resolved); nothing when the word is none.', 'function __osm_canonical', '    switch "$argv[1]|$argv[2]"'];
  for (const path of t.paths) {
    for (const s of t.subcommands.get(path) ?? []) out.push(`        case ${q(`${path}|${s.word}`)}`, `            echo ${q(s.canonical)}`);
  }
  out.push('    end', 'end', '', '# Whether a flag takes a value (prints its hint when it does).', 'function __osm_flag_value', '    switch "$argv[1]|$argv[2]"');
  const globalValued = new Set(t.globalFlags.filter((f) => f.hint).flatMap((f) => f.names));
  for (const path of t.paths) {
    if (path === '') continue;
    for (const f of t.flags.get(path) ?? []) {
      if (!f.hint && !f.names.some((n) => globalValued.has(n))) continue;
      out.push(`        case ${f.names.map((n) => q(`${path}|${n}`)).join(' ')}`, f.hint ? `            echo ${q(f.hint)}` : '            return 0');
    }
  }
  for (const f of t.globalFlags) {
    if (f.hint) out.push(`        case ${f.names.map((n) => q(`*|${n}`)).join(' ')}`, `            echo ${q(f.hint)}`);
  }
  out.push('    end', 'end', '');
  return out;
}

/** Generates the fish script for `root`. */
export function fishScript(root: CommandSpec): string {
  const t = completionTables(root);
  const out: string[] = [
    '# fish completion for osm. Generated from the osm program (`osm completion fish`): do not edit.',
    '# Install: copy completions/osm.fish to ~/.config/fish/completions/osm.fish',
    '# (or `osm completion fish | source` in ~/.config/fish/config.fish).',
    '',
    ...tables(t),
    BODY.replace('@BASE_FLAGS@', BASE_FLAGS.map(q).join(' ')),
    '',
    '# No file names unless a flag or argument takes a file.',
    'complete -c osm -f',
    '',
  ];
  for (const path of t.paths) {
    for (const s of t.subcommands.get(path) ?? []) {
      out.push(`complete -c osm -n ${q(`__osm_at ${q(path)} 0`)} -a ${q(s.word)} -d ${q(oneLine(s.description))}`);
    }
  }
  for (const f of t.globalFlags) out.push(flagLine(undefined, f.names, f.description, f.hint));
  for (const path of t.paths) {
    if (path === '') continue;
    for (const f of t.flags.get(path) ?? []) out.push(flagLine(`__osm_at ${q(path)}`, f.names, f.description, f.hint));
    (t.args.get(path) ?? []).forEach((a, i) => {
      if (!a.hint || a.hint === 'free') return;
      const cond = `__osm_at ${q(path)} ${i}${a.variadic ? '+' : ''}`;
      out.push(`complete -c osm -n ${q(cond)}${valueArgs(a.hint).replace(' -r', '')} -d ${q(oneLine(a.description || a.name))}`);
    });
  }
  return `${out.join('\n')}\n`;
}

const BODY = `# "<command path>|<positional words>" for the words before the cursor.
function __osm_state
    set -l words (commandline -opc)
    set -e words[1]
    set -l cmdpath ''
    set -l pos 0
    set -l skip 0
    for w in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        if string match -q -- '--*=*' $w
            continue
        else if string match -q -- '-?*' $w
            set -l hint (__osm_flag_value "$cmdpath" $w)
            if test -n "$hint"
                set skip 1
            end
        else
            set -l canon ''
            if test $pos -eq 0
                set canon (__osm_canonical "$cmdpath" $w)
            end
            if test -n "$canon"
                if test -z "$cmdpath"
                    set cmdpath $canon
                else
                    set cmdpath "$cmdpath $canon"
                end
            else
                set pos (math $pos + 1)
            end
        end
    end
    echo "$cmdpath|$pos"
end

# True when the command path is $argv[1] (and, with $argv[2], the positional index is it; N+ = N or more).
function __osm_at
    set -l state (string split -m 1 '|' -- (__osm_state))
    test "$state[1]" = "$argv[1]"; or return 1
    test (count $argv) -lt 2; and return 0
    if string match -q -- '*+' $argv[2]
        test $state[2] -ge (string trim -r -c '+' -- $argv[2])
    else
        test $state[2] -eq $argv[2]
    end
end

# Values osm lists itself (workflows, runs, workspaces), reading the base folder named on the line.
function __osm_dynamic
    set -l words (commandline -opc)
    set -l args
    for i in (seq 2 (count $words))
        if contains -- $words[$i] @BASE_FLAGS@
            set -l next (math $i + 1)
            if test $next -le (count $words)
                set -a args $words[$i] $words[$next]
            end
        end
    end
    command $words[1] $args __complete $argv[1] 2>/dev/null
end`;
