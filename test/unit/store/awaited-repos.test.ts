/**
 * Every call of the async repository interface (`repos.<repo>.<method>(…)`, `repos.tx(…)`) outside
 * src/store is awaited, returned, or deliberately detached with `void`: a forgotten await would
 * let a run act before its state change is written, and lose the write's error. TypeScript catches
 * a result that is used; this catches one that is not. A call whose promise is kept in a variable
 * and awaited later must say so on its line (`// awaited below`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';

const SRC = join(ROOT, 'src');
const CALL = /\brepos\.(?:\w+\.\w+|tx)\(/g;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Whether the call starting at `at` in `line` is awaited, returned, detached or passed on. */
export function handled(line: string, at: number): boolean {
  if (line.includes('// awaited below')) return true;
  const before = line.slice(0, at);
  return /(\bawait|\breturn|\bvoid|=>)\s*(\(\s*)*[\w.!?]*$/.test(before) || /\b(Promise\.(all|allSettled|race)|await)\(\s*\[?[^;]*$/.test(before);
}

export function unawaited(source: string): number[] {
  const out: number[] = [];
  source.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(CALL)) if (!handled(line, m.index!)) out.push(i + 1);
  });
  return out;
}

describe('async repository calls are awaited', () => {
  it('the check tells a floating call from a handled one', () => {
    for (const ok of ['await app.repos.runs.get(1);', 'return deps.repos.runs.get(1);', 'const r = await this.deps.repos.steps.list({});', 'void app.repos.events.add(e);', 'const f = () => app.repos.runs.get(1);', 'await Promise.all([app.repos.runs.get(1), app.repos.steps.get(2)]);', 'await app.repos.tx(async () => {', 'const p = app.repos.runs.get(1); // awaited below']) {
      expect(unawaited(ok), ok).toEqual([]);
    }
    for (const bad of ['app.repos.runs.update(1, {});', 'const r = app.repos.runs.get(1);', 'if (x) deps.repos.events.add(e);', 'app.repos.tx(async () => {});']) {
      expect(unawaited(bad), bad).toEqual([1]);
    }
  });

  it('no call above src/store leaves its promise floating', () => {
    const found: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(ROOT, file);
      if (rel.startsWith(join('src', 'store'))) continue;
      const src = readFileSync(file, 'utf8');
      for (const n of unawaited(src)) found.push(`${rel}:${n}: ${src.split('\n')[n - 1]!.trim()}`);
    }
    expect(found).toEqual([]);
  });
});
