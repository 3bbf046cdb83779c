/**
 * Build step (`npm run build` runs it after tsc): writes completions/osm.{bash,zsh,fish} and
 * man/osm.1 from the commander program, so the shipped files always match the built CLI, and
 * dist/build-info.json (build time and commit for `osm --version`).
 * Usage: node dist/cli/completion/generate.js [package root]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProgram } from '../main.js';
import { VERSION } from '../../version.js';
import { programSpec } from './spec.js';
import { bashScript } from './bash.js';
import { zshScript } from './zsh.js';
import { fishScript } from './fish.js';
import { manPage } from './man.js';
import { writeBuildInfo } from '../build-info.js';

export type Shell = 'bash' | 'zsh' | 'fish';
export const SHELLS: Shell[] = ['bash', 'zsh', 'fish'];

/** The completion script of `shell` for the current program. */
export function completionScript(shell: Shell): string {
  const spec = programSpec(buildProgram());
  return shell === 'bash' ? bashScript(spec) : shell === 'zsh' ? zshScript(spec) : fishScript(spec);
}

/** The man page's date: SOURCE_DATE_EPOCH when set (reproducible builds), else today. */
export function manDate(): string {
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  return (Number.isFinite(epoch) && epoch > 0 ? new Date(epoch * 1000) : new Date()).toISOString().slice(0, 10);
}

/** The man page for the current program. */
export function manPageText(): string {
  return manPage(programSpec(buildProgram()), VERSION, manDate());
}

/** Writes every generated file under `root`; returns their paths. */
export function generateAll(root: string): string[] {
  const written: string[] = [];
  mkdirSync(join(root, 'completions'), { recursive: true });
  mkdirSync(join(root, 'man'), { recursive: true });
  for (const shell of SHELLS) {
    const file = join(root, 'completions', `osm.${shell}`);
    writeFileSync(file, completionScript(shell));
    written.push(file);
  }
  const man = join(root, 'man', 'osm.1');
  writeFileSync(man, manPageText());
  written.push(man);
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(fileURLToPath(import.meta.url), '../../../..'));
  for (const file of [...generateAll(root), writeBuildInfo(root)]) process.stdout.write(`generated ${file}\n`);
}
