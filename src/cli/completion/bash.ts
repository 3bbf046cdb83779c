/**
 * The bash completion script, generated from the command tree. Static knowledge (commands,
 * aliases, flags, choices) is compiled into `case` tables; dynamic values (workflow names, run
 * ids, workspaces) come from `osm __complete <source>` at completion time, with the base-folder
 * flags already typed on the line passed along.
 */
import type { CommandSpec } from './spec.js';
import { completionTables } from './tables.js';
import { caseTables, unescapeBody } from './sh-tables.js';

/** Flags whose value says where the base folder is: forwarded to `osm __complete`. */
export const BASE_FLAGS = ['-b', '--base-folder', '-F', '--workflow-folder', '--settings-file'];

/** Generates the bash script for `root`. */
export function bashScript(root: CommandSpec): string {
  const out: string[] = [
    '# bash completion for osm. Generated from the osm program (`osm completion bash`): do not edit.',
    '# Install: `source <(osm completion bash)` in ~/.bashrc, or copy completions/osm.bash to',
    '# ~/.local/share/bash-completion/completions/osm',
    '',
    ...caseTables(completionTables(root), false),
    unescapeBody(BODY).replace('@BASE_FLAGS@', BASE_FLAGS.join('|')),
  ];
  return `${out.join('\n')}\n`;
}

const BODY = String.raw`# Adds the candidates of a value hint for the word being completed.
_osm_complete_hint() {
  local hint="$1" cur="$2" src files="" line
  case "$hint" in
    file) compopt -o filenames 2>/dev/null; while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -f -- "$cur") ;;
    dir) compopt -o filenames 2>/dev/null; while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -d -- "$cur") ;;
    choices:*) while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -W "\${hint#choices:}" -- "$cur") ;;
    dyn:*)
      src="\${hint#dyn:}"
      if [[ "$src" == *:files ]]; then src="\${src%:files}"; files=1; fi
      while IFS= read -r line; do
        line="\${line%%$'\t'*}"
        [[ -n "$line" && "$line" == "$cur"* ]] && COMPREPLY+=("$line")
      done < <("\${_osm_cmd[@]}" "\${_osm_base_args[@]}" __complete "$src" 2>/dev/null)
      if [[ -n "$files" ]]; then
        compopt -o filenames 2>/dev/null
        while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -f -- "$cur")
      fi
      ;;
  esac
}

# The completion function: walks the words before the cursor to find the command path (aliases
# resolved), skipping flags and their values, then offers subcommands, flags or values.
_osm() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" word canon hint valueflag="" pos=0 i=1 line
  local -a _osm_base_args=() _osm_cmd=("\${COMP_WORDS[0]}")
  COMPREPLY=()
  while (( i < COMP_CWORD )); do
    word="\${COMP_WORDS[i]}"
    if [[ "$word" == -?* && "$word" != *=* ]]; then
      hint="$(_osm_flag_value "$cmdpath" "$word")"
      if [[ -n "$hint" ]]; then
        local vi=$(( i + 1 ))
        [[ "\${COMP_WORDS[vi]}" == "=" ]] && vi=$(( vi + 1 ))
        if (( vi >= COMP_CWORD )); then
          valueflag="$word"
        else
          case "$word" in @BASE_FLAGS@) _osm_base_args+=("$word" "\${COMP_WORDS[vi]}") ;; esac
        fi
        i=$vi
      fi
    elif [[ "$word" == --*=* ]]; then
      case "\${word%%=*}" in --base-folder|--workflow-folder|--settings-file) _osm_base_args+=("$word") ;; esac
    elif [[ "$word" != "=" ]]; then
      canon=""
      (( pos == 0 )) && canon="$(_osm_canonical "$cmdpath" "$word")"
      if [[ -n "$canon" ]]; then cmdpath="\${cmdpath:+$cmdpath }$canon"; else pos=$(( pos + 1 )); fi
    fi
    i=$(( i + 1 ))
  done
  [[ "$cur" == "=" ]] && cur=""
  if [[ -n "$valueflag" ]]; then
    _osm_complete_hint "$(_osm_flag_value "$cmdpath" "$valueflag")" "$cur"
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -W "$(_osm_flags "$cmdpath"; [[ -n "$cmdpath" ]] && _osm_flags '')" -- "$cur")
    return 0
  fi
  if (( pos == 0 )); then
    while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -W "$(_osm_subcommands "$cmdpath")" -- "$cur")
  fi
  _osm_complete_hint "$(_osm_arg_value "$cmdpath" "$pos")" "$cur"
  return 0
}

complete -F _osm osm`;
