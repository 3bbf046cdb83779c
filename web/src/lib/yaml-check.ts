/**
 * YAML checks for the settings editor, loaded only on that page (the parser is the same `yaml`
 * package the daemon uses): syntax errors with their line, and the line of a dotted key path
 * (`server.port`) so the server's validation message can be shown where it belongs.
 */
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

export interface YamlProblem {
  line: number;
  message: string;
}

/** Syntax errors of a YAML text, each at its line. */
export function syntaxProblems(text: string): YamlProblem[] {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  return doc.errors.map((e) => ({ line: e.linePos?.[0]?.line ?? lc.linePos(e.pos[0]).line, message: e.message.split('\n')[0]! }));
}

/** The 1-based line of a dotted path's key in the text, or undefined. */
export function lineOfPath(text: string, path: string): number | undefined {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  let node: unknown = doc.contents;
  let line: number | undefined;
  for (const part of path.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '')) {
    if (isMap(node)) {
      const pair = node.items.find((p) => String((p.key as { value?: unknown } | null)?.value ?? p.key) === part);
      if (!pair) break;
      const key = pair.key as Node | null;
      if (key?.range) line = lc.linePos(key.range[0]).line;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(part)] as Node | undefined;
      if (!item) break;
      if (item.range) line = lc.linePos(item.range[0]).line;
      node = item;
    } else break;
  }
  return line;
}

/** Places a server message ("Invalid YAML configuration: server.port: …") at the line of the first path it names. */
export function placeServerMessage(text: string, message: string): YamlProblem {
  for (const m of message.matchAll(/([A-Za-z_][\w-]*(?:(?:\.[\w-]+)|(?:\[\d+\]))+)/g)) {
    const line = lineOfPath(text, m[1]!);
    if (line) return { line, message };
  }
  const pos = /line (\d+)/i.exec(message);
  return { line: pos ? Number(pos[1]) : 0, message };
}
