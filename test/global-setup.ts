import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createPgTemplate } from './helpers/pg.js';

const ROOT = resolve(import.meta.dirname, '..');


function newest(dir: string): number {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) max = Math.max(max, newest(p));
    else if (entry.name.endsWith('.ts')) max = Math.max(max, statSync(p).mtimeMs);
  }
  return max;
}

/**
 * End-to-end tests spawn the built CLI: build once before the suite when `dist/` is missing or
 * older than `src/` (`npm test` already builds in its pretest step, so this is usually a no-op).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  build();
  // One migrated PostgreSQL template for the whole run (test/helpers/pg.ts copies it per test
  // database), dropped when the run ends. No PostgreSQL: none (its tests skip, or fail on CI).
  const template = await createPgTemplate().catch(() => undefined);
  project.provide('pgTemplate', template?.name ?? '');
  return async () => {
    await template?.drop().catch(() => undefined);
  };
}

function build(): void {
  const marker = join(ROOT, 'dist/cli/main.js');
  if (existsSync(marker) && statSync(marker).mtimeMs >= newest(join(ROOT, 'src'))) {
    generateCompletions();
    return;
  }
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  } catch (err) {
    // tsc still emits when some file has a type error; only a missing build is fatal here
    // (`npm run build` and CI's typecheck catch the type errors themselves).
    if (!existsSync(marker)) throw err;
  }
  generateCompletions();
}

/** completions/ and man/ are build output too (`npm run build` writes them after tsc); cheap to redo. */
function generateCompletions(): void {
  execFileSync(process.execPath, [join(ROOT, 'dist/cli/completion/generate.js')], { cwd: ROOT, stdio: 'ignore' });
}
