/** Object listings drawn as a `tree`-style text (cdn_ls_tree, osm storage ls --tree). */
import type { ObjectInfo } from './ops.js';

interface Node {
  children: Map<string, Node>;
  size?: number;
}

/** "1536" → "1.5 KiB". */
export function humanSize(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/**
 * The objects below `prefix` as a tree rooted at the prefix; `depth` > 0 stops after that many
 * levels (deeper entries are summarised in their folder's line). Control characters in keys are
 * escaped so a hostile key cannot rewrite the terminal.
 */
export function renderTree(objects: ObjectInfo[], prefix: string, depth = 0): string {
  const root: Node = { children: new Map() };
  for (const o of objects) {
    const rel = o.key.slice(prefix.length);
    if (rel === '') continue;
    const parts = rel.split('/');
    let node = root;
    parts.forEach((p, i) => {
      const leaf = i === parts.length - 1;
      const name = leaf ? p : `${p}/`;
      if (leaf && p === '') return; // folder marker
      let child = node.children.get(name);
      if (!child) {
        child = { children: new Map() };
        node.children.set(name, child);
      }
      if (leaf) child.size = o.size;
      node = child;
    });
  }
  const safe = (s: string) => s.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const count = (n: Node): number => [...n.children.values()].reduce((a, c) => a + (c.size !== undefined && c.children.size === 0 ? 1 : 0) + count(c), 0);
  const lines = [safe(prefix || '/')];
  const draw = (node: Node, indent: string, level: number) => {
    const entries = [...node.children.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    entries.forEach(([name, child], i) => {
      const last = i === entries.length - 1;
      const isDir = name.endsWith('/');
      let label = safe(name);
      if (!isDir && child.size !== undefined) label += ` (${humanSize(child.size)})`;
      if (isDir && depth > 0 && level >= depth) label += ` … ${count(child)} file(s)`;
      lines.push(`${indent}${last ? '└── ' : '├── '}${label}`);
      if (isDir && (depth <= 0 || level < depth)) draw(child, indent + (last ? '    ' : '│   '), level + 1);
    });
  };
  draw(root, '', 1);
  const files = objects.filter((o) => o.key.length > prefix.length && !o.key.endsWith('/')).length;
  lines.push('', `${files} file(s), ${humanSize(objects.reduce((a, o) => a + o.size, 0))}`);
  return lines.join('\n');
}
