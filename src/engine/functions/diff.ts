/** Diff functions (reference §10.2 "diff"). */
import type { FnImpl } from './registry.js';
import { argStr, nonBlankLines } from './helpers.js';

/** The diff functions, by snake_case name (aliases come from the catalogue). */
export const diffFunctions: Record<string, FnImpl> = {
  // Lines of file2 absent from file1 (new content), in file2's order; a missing file1 counts as empty.
  extract_diff: (_c, a, b) => {
    const f1 = argStr(a);
    const f2 = argStr(b);
    if (f1 === null || f2 === null) return '';
    const next = nonBlankLines(f2);
    if (next === null) return '';
    const old = new Set(nonBlankLines(f1) ?? []);
    return next.filter((l) => !old.has(l)).join('\n');
  },
};
