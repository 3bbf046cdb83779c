/**
 * Finds the names of functions a JS snippet calls (for the linter's unknown-function rule). A
 * heuristic, not a parser: strings and templates are blanked out, method calls (`a.b()`),
 * JS keywords, standard globals and functions the snippet defines itself are not reported.
 */

const JS_NAMES = new Set([
  'if', 'for', 'while', 'switch', 'catch', 'return', 'typeof', 'function', 'new', 'await', 'void', 'delete', 'in', 'of',
  'parseInt', 'parseFloat', 'isNaN', 'isFinite', 'String', 'Number', 'Boolean', 'Array', 'Object', 'JSON', 'Math',
  'Date', 'RegExp', 'Error', 'Map', 'Set', 'Symbol', 'Promise', 'encodeURIComponent', 'decodeURIComponent',
  'encodeURI', 'decodeURI', 'escape', 'unescape',
]);

/** Function names called by `snippet`, in first-seen order. */
export function calledFunctions(snippet: string): string[] {
  const code = snippet
    .replace(/\{\{[\s\S]*?\}\}|\[\[[\s\S]*?\]\]/g, ' x ')
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""')
    .replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, ' ');
  const defined = new Set<string>();
  for (const m of code.matchAll(/\bfunction\s+([A-Za-z_$][\w$]*)|\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=/g)) {
    defined.add((m[1] ?? m[2])!);
  }
  const out: string[] = [];
  for (const m of code.matchAll(/(?<![\w$.])([A-Za-z_$][\w$]*)\s*\(/g)) {
    const name = m[1]!;
    if (JS_NAMES.has(name) || defined.has(name) || out.includes(name)) continue;
    out.push(name);
  }
  return out;
}
