/** Quoting for the generated shell scripts: every name and description is data, never code. */

/** POSIX single-quoted word (works in bash, zsh and fish for the characters osm's names use). */
export function sq(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** fish single-quoted word: fish escapes `\` and `'` with a backslash inside single quotes. */
export function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** One line of help text (completion descriptions are shown on one line). */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The hint of a value as the generated scripts encode it: `file`, `dir`, `choices:a b`, `dyn:runs`, `dyn:workflows:files`, or ''. */
export function encodeHint(hint: import('./value-hints.js').ValueHint): string {
  switch (hint.kind) {
    case 'none':
      return '';
    case 'free':
      return 'free';
    case 'file':
      return 'file';
    case 'dir':
      return 'dir';
    case 'choices':
      return `choices:${hint.values.join(' ')}`;
    case 'dynamic':
      return `dyn:${hint.source}${hint.files ? ':files' : ''}`;
  }
}
