/**
 * Entry-name rules shared by the zip (yauzl) and tar (node-tar) readers. Both libraries have their
 * own path guards; these rules run first so that a refusal names the entry and the reason in the
 * caller's words, and so that zip and tar archives are held to the same names.
 */

/** How a caller reports a refused archive and how strict entry names are. */
export interface ArchivePolicy {
  /** Builds the error thrown for a refused archive; `detail` names the entry and the reason. */
  fail: (detail: string) => Error;
  /** Prefix of name errors, e.g. `illegal file path: `. */
  nameLabel: string;
  /** Drop `.` and empty segments (`./a//b` → `a/b`) instead of refusing them; the root (`./`) is skipped. */
  lenientSegments?: boolean;
}

/** An entry name as shown in messages (control characters escaped). */
export const shownName = (name: string) => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);

/**
 * The safe relative segments of an archive entry name (zip or tar). Refuses NUL and control
 * characters, backslashes, absolute and drive paths, `..` segments and over-long names; `.` and
 * empty segments are refused, or dropped with `lenientSegments` (then `./` gives []).
 */
export function entryNameSegments(name: string, policy: ArchivePolicy): string[] {
  const bad = (why: string) => policy.fail(`${policy.nameLabel}${shownName(name)} (${why})`);
  if (name.includes('\0')) throw bad('NUL byte');
  if (/[\u0000-\u001f\u007f]/.test(name)) throw bad('control character');
  if (name.includes('\\')) throw bad('backslash');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw bad('absolute path');
  if (name.length === 0 || name.length > 4096) throw bad('empty or too long');
  const parts = (name.endsWith('/') ? name.slice(0, -1) : name).split('/');
  const segments: string[] = [];
  for (const s of parts) {
    if (s === '..') throw bad('parent directory segment');
    if (s === '' || s === '.') {
      if (policy.lenientSegments) continue;
      throw bad('empty or "." segment');
    }
    if (Buffer.byteLength(s) > 255) throw bad('name too long');
    segments.push(s);
  }
  return segments;
}

/**
 * The files and folders an archive will create. Refuses a second entry for the same file and an
 * entry below a file: either would make what is written depend on the order of extraction.
 */
export class EntryTree {
  private readonly files = new Set<string>();
  private readonly dirs = new Set<string>();

  constructor(private readonly reject: (detail: string) => Error) {}

  /** Records one entry (its checked segments); `shown` is the entry's name for messages. */
  add(segments: string[], dir: boolean, shown: string): void {
    const path = segments.join('/');
    if (this.files.has(path) || (!dir && this.dirs.has(path))) throw this.reject(`duplicate entry: ${shown}`);
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (this.files.has(parent)) throw this.reject(`entry below a file: ${shown}`);
      this.dirs.add(parent);
    }
    (dir ? this.dirs : this.files).add(path);
  }
}
