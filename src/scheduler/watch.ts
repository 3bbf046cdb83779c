/**
 * Watch triggers: a chokidar watcher on one file, debounced per trigger, firing on add and change
 * (the reference fires on write/create of exactly the registered path). What may be watched is
 * restricted to the base folder and the data folder, so an API client cannot make the daemon
 * observe arbitrary files (e.g. to learn when /etc/shadow changes).
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { errors } from '../errors.js';
import { isInside } from '../util/fs-safe.js';
import type { AppContext } from '../services/context.js';

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
function realish(p: string): string {
  let cur = p;
  const rest: string[] = [];
  while (!existsSync(cur)) {
    const parent = dirname(cur);
    if (parent === cur) return p;
    rest.unshift(cur.slice(parent.length).replace(/^[/\\]/, ''));
    cur = parent;
  }
  try {
    return resolve(realpathSync(cur), ...rest);
  } catch {
    return p;
  }
}

/**
 * Resolves a watch path (relative paths are taken from the base folder) and checks it lies inside
 * the base folder or the data folder, symlinks resolved. Throws `watchPathOutside`.
 */
export function checkWatchPath(app: AppContext, path: string): string {
  const paths = app.settings().paths;
  if (typeof path !== 'string' || path.trim() === '' || path.includes('\0')) throw errors.watchPathOutside(String(path));
  const abs = resolve(paths.base, path.trim());
  const real = realish(abs);
  const roots = [paths.base, paths.data].filter(Boolean).flatMap((r) => [resolve(r), realish(resolve(r))]);
  const ok = roots.some((root) => isInside(root, abs) && abs !== root) && roots.some((root) => isInside(root, real) && real !== root);
  if (!ok || !isAbsolute(abs)) throw errors.watchPathOutside(path);
  return abs;
}

export interface FileWatch {
  close(): Promise<void>;
}

/**
 * Watches one file; `onChange` runs once per burst of events (`debounceMs` after the last one).
 * Resolves once the watcher is ready.
 */
export async function watchFile(path: string, debounceMs: number, onChange: () => void, onError?: (err: unknown) => void): Promise<FileWatch> {
  const { watch } = await import('chokidar');
  const target = resolve(path);
  const dir = dirname(target);
  // The folder is watched, not the file: a file that does not exist yet, or that an editor
  // replaces by rename on every save, is then still seen (as the settings watcher does).
  const watcher: FSWatcher = watch(dir, { ignoreInitial: true, persistent: true, depth: 0, ignored: (p: string) => resolve(p) !== dir && resolve(p) !== target });
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const fire = (p: string) => {
    if (closed || resolve(p) !== target) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) onChange();
    }, Math.max(0, debounceMs));
    timer.unref?.();
  };
  watcher.on('add', fire).on('change', fire);
  watcher.on('error', (err) => onError?.(err));
  await new Promise<void>((ok) => watcher.once('ready', () => ok()));
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await watcher.close();
    },
  };
}
