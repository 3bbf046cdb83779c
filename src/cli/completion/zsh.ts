/**
 * The zsh completion script, generated from the command tree: the same `case` tables as bash
 * (with descriptions for `_describe`), a walker over `$words`, and `osm __complete` for dynamic
 * values. Works autoloaded from `$fpath` (as `_osm`) or sourced.
 */
import type { CommandSpec } from './spec.js';
import { completionTables } from './tables.js';
import { caseTables, unescapeBody } from './sh-tables.js';
import { BASE_FLAGS } from './bash.js';

/** Generates the zsh script for `root`. */
export function zshScript(root: CommandSpec): string {
  const out: string[] = [
    '#compdef osm',
    '# zsh completion for osm. Generated from the osm program (`osm completion zsh`): do not edit.',
    '# Install: copy completions/osm.zsh to a folder on $fpath as _osm (e.g. ~/.zfunc/_osm with',
    '# fpath=(~/.zfunc $fpath) before compinit), or `source <(osm completion zsh)` after compinit.',
    '',
    ...caseTables(completionTables(root), true),
    unescapeBody(BODY).replace('@BASE_FLAGS@', BASE_FLAGS.join('|')),
  ];
  return `${out.join('\n')}\n`;
}

const BODY = String.raw`# Offers the candidates of a value hint.
_osm_complete_hint() {
  local hint="$1" src files="" l
  local -a vals described
  case "$hint" in
    file) _files ;;
    dir) _files -/ ;;
    choices:*) vals=(\${(s: :)\${hint#choices:}}); compadd -a vals ;;
    dyn:*)
      src="\${hint#dyn:}"
      if [[ "$src" == *:files ]]; then src="\${src%:files}"; files=1; fi
      for l in "\${(@f)$("\${_osm_cmd[@]}" "\${_osm_base_args[@]}" __complete "$src" 2>/dev/null)}"; do
        [[ -n "$l" ]] || continue
        if [[ "$l" == *$'\t'* ]]; then described+=("\${\${l%%$'\t'*}//:/\\:}:\${l#*$'\t'}"); else described+=("\${l//:/\\:}"); fi
      done
      (( \${#described} )) && _describe -t values 'value' described
      [[ -n "$files" ]] && _files
      ;;
  esac
}

# The completion function: walks the words before the cursor to find the command path (aliases
# resolved), skipping flags and their values, then offers subcommands, flags or values.
_osm() {
  local cur="\${words[CURRENT]}" cmdpath="" word canon hint valueflag="" pos=0 i=2 vi
  local -a _osm_base_args _osm_cmd subs flags
  _osm_cmd=("\${words[1]}")
  while (( i < CURRENT )); do
    word="\${words[i]}"
    if [[ "$word" == -?* && "$word" != *=* ]]; then
      hint="$(_osm_flag_value "$cmdpath" "$word")"
      if [[ -n "$hint" ]]; then
        vi=$(( i + 1 ))
        if (( vi >= CURRENT )); then
          valueflag="$word"
        else
          case "$word" in @BASE_FLAGS@) _osm_base_args+=("$word" "\${words[vi]}") ;; esac
        fi
        i=$vi
      fi
    elif [[ "$word" == --*=* ]]; then
      case "\${word%%=*}" in --base-folder|--workflow-folder|--settings-file) _osm_base_args+=("$word") ;; esac
    else
      canon=""
      (( pos == 0 )) && canon="$(_osm_canonical "$cmdpath" "$word")"
      if [[ -n "$canon" ]]; then cmdpath="\${cmdpath:+$cmdpath }$canon"; else pos=$(( pos + 1 )); fi
    fi
    i=$(( i + 1 ))
  done
  if [[ -n "$valueflag" ]]; then
    _osm_complete_hint "$(_osm_flag_value "$cmdpath" "$valueflag")"
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    flags=("\${(@f)$(_osm_flags "$cmdpath"; [[ -n "$cmdpath" ]] && _osm_flags '')}")
    _describe -t flags 'flag' flags
    return 0
  fi
  if (( pos == 0 )); then
    subs=("\${(@f)$(_osm_subcommands "$cmdpath")}")
    [[ -n "\${subs[1]}" ]] && _describe -t commands 'command' subs
  fi
  _osm_complete_hint "$(_osm_arg_value "$cmdpath" "$pos")"
  return 0
}

if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _osm "$@"
else
  compdef _osm osm
fi`;
