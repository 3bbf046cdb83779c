/**
 * When and from which commit this copy of osm was built: written to dist/build-info.json by the
 * build (`npm run build`), read by `osm --version` (the reference prints Build and Commit lines).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  built_at: string;
  commit: string;
}

const FILE = fileURLToPath(new URL('../build-info.json', import.meta.url));

/** The build info of this copy, or `unknown` values when it was built without one. */
export function readBuildInfo(): BuildInfo {
  try {
    const j = JSON.parse(readFileSync(FILE, 'utf8')) as Partial<BuildInfo>;
    return { built_at: String(j.built_at ?? 'unknown'), commit: String(j.commit ?? 'unknown') };
  } catch {
    return { built_at: 'unknown', commit: 'unknown' };
  }
}

/** Records the build time (SOURCE_DATE_EPOCH when set) and the git commit of `root`, when it is a checkout. */
export function writeBuildInfo(root: string): string {
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  const builtAt = (Number.isFinite(epoch) && epoch > 0 ? new Date(epoch * 1000) : new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || 'unknown';
  } catch {
    // not a git checkout (an npm package): the version says enough
  }
  const file = join(root, 'dist', 'build-info.json');
  writeFileSync(file, `${JSON.stringify({ built_at: builtAt, commit }, null, 2)}\n`);
  return file;
}
