/**
 * The live settings of a long-running process (the daemon). Code reads `manager.current` at the
 * moment it needs a value, so a reload really applies — unlike the reference, whose handlers
 * captured the startup config (server-api §9.3). A bad file never replaces a good config: it is
 * recorded in `lastError` and the previous settings stay in force.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { errors, isOsmError, messageOf } from '../errors.js';
import { atomicWriteFile, backupFile } from '../util/fs-safe.js';
import { parseSettingsText, type LoadedSettings, type LoadOptions } from './load.js';

export type SettingsListener = (loaded: LoadedSettings, previous: LoadedSettings) => void;

/** Debounce for file events: editors write in several steps (truncate, write, rename). */
export const RELOAD_DEBOUNCE_MS = 300;
/** How often the settings file is stat'ed for changes. */
export const POLL_MS = 500;

/** Holds the live settings; reloads on demand, on `replaceText`, and (after `watch()`) on file change. */
export class SettingsManager {
  private loaded: LoadedSettings;
  private readonly opts: LoadOptions;
  private lastText: string | undefined;
  private listeners = new Set<SettingsListener>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Bumped by every watch() and close(): a watch() that finds it changed was overtaken. */
  private watchGeneration = 0;
  private _version = 1;
  private _lastReload = new Date().toISOString();
  private _lastError = '';

  constructor(loaded: LoadedSettings, opts: LoadOptions = {}) {
    this.loaded = loaded;
    this.opts = opts;
    this.lastText = existsSync(loaded.file) ? readFileSync(loaded.file, 'utf8') : undefined;
  }

  /** The settings in force now (read it at use time, do not keep it). */
  get current(): LoadedSettings {
    return this.loaded;
  }
  /** Bumped on every successful reload; starts at 1. */
  get version(): number {
    return this._version;
  }
  /** ISO time of the last successful load. */
  get lastReload(): string {
    return this._lastReload;
  }
  /** Why the last reload failed, '' when the file in force is the file on disk. */
  get lastError(): string {
    return this._lastError;
  }
  /** The settings file being managed. */
  get path(): string {
    return this.loaded.file;
  }
  /** True between `watch()` and `close()`. */
  get isWatching(): boolean {
    return this.watcher !== undefined;
  }
  /** Number of registered change listeners. */
  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Status for `GET /settings/status`. */
  status(): { path: string; last_reload: string; is_watching: boolean; error: string; version: number } {
    return { path: this.path, last_reload: this.lastReload, is_watching: this.isWatching, error: this.lastError, version: this.version };
  }

  /** Registers a callback fired after each successful reload; returns an unsubscribe function. */
  onChange(cb: SettingsListener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Re-reads and validates the file. On failure the old settings stay, lastError is set, and settingsReload is thrown. */
  reload(): LoadedSettings {
    let text: string;
    let next: LoadedSettings;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      this._lastError = messageOf(err);
      throw errors.settingsReload(this._lastError);
    }
    try {
      next = this.parse(text);
    } catch (err) {
      this._lastError = messageOf(err);
      // Remember the bad text as seen: a later restore of the good file is then a change the
      // watcher reloads (and clears the error), as it is for errors the watcher finds itself.
      this.lastText = text;
      throw errors.settingsReload(this._lastError);
    }
    this.swap(next, text);
    return next;
  }

  /**
   * Replaces the file with `yamlText` (PUT /settings/yaml): validated first (settingsInvalid,
   * file untouched), previous file backed up to `<file>.backup`, written atomically, reloaded.
   */
  replaceText(yamlText: string): { path: string; backup: string } {
    const next = this.parse(yamlText); // throws errors.settingsInvalid
    const backup = backupFile(this.path);
    atomicWriteFile(this.path, yamlText, 0o600);
    this.swap(next, yamlText);
    return { path: this.path, backup };
  }

  /** Starts watching the file's folder; resolves once the watcher is ready. */
  async watch(): Promise<void> {
    if (this.watcher) return;
    const generation = ++this.watchGeneration;
    const { watch } = await import('chokidar');
    // close() (a SIGTERM right after start) may have run while chokidar was loading: a watcher
    // started now would never be closed, and its stat poller alone keeps the process alive.
    if (generation !== this.watchGeneration || this.watcher) return;
    const file = resolve(this.path);
    // Poll the file itself (one stat every POLL_MS) rather than watching its folder: the folder
    // also holds the database, whose WAL changes on every write, and a folder watch then costs
    // the daemon measurable CPU on every write (measured in the fan-out benchmark). Polling by
    // path also sees atomic saves that replace the file with a new inode.
    const watcher = watch(file, {
      ignoreInitial: true,
      usePolling: true,
      interval: POLL_MS,
      binaryInterval: POLL_MS,
    });
    this.watcher = watcher;
    const onEvent = (p: string) => {
      if (resolve(p) === file) this.schedule();
    };
    watcher.on('add', onEvent).on('change', onEvent);
    watcher.on('error', (err) => {
      this._lastError = `watcher: ${messageOf(err)}`;
    });
    await new Promise<void>((ok) => watcher.once('ready', () => ok()));
    // The poller takes its baseline stat asynchronously after 'ready': a write landing before that
    // stat would never be reported. Compare the content a little later, twice (a no-op when
    // nothing changed), so such a write is still picked up.
    for (const delay of [POLL_MS * 2, POLL_MS * 6]) {
      const t = setTimeout(() => {
        if (generation === this.watchGeneration && this.watcher === watcher && !this.timer) this.reloadFromWatcher();
      }, delay);
      t.unref?.();
    }
  }

  /** Stops watching and cancels a pending reload. */
  async close(): Promise<void> {
    this.watchGeneration++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const w = this.watcher;
    this.watcher = undefined;
    if (w) await w.close();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reloadFromWatcher();
    }, RELOAD_DEBOUNCE_MS);
    this.timer.unref?.();
  }

  private reloadFromWatcher(): void {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      this._lastError = messageOf(err);
      return;
    }
    // Our own writes (replaceText) come back as file events; they are already in force.
    if (text === this.lastText) return;
    try {
      this.swap(this.parse(text), text);
    } catch (err) {
      this._lastError = isOsmError(err) ? err.message : messageOf(err);
      this.lastText = text;
    }
  }

  private parse(text: string): LoadedSettings {
    return parseSettingsText(text, this.loaded.paths.base, { settingsFile: this.path, workflowFolder: this.opts.workflowFolder });
  }

  private swap(next: LoadedSettings, text: string): void {
    const previous = this.loaded;
    this.loaded = next;
    this.lastText = text;
    this._version += 1;
    this._lastReload = new Date().toISOString();
    this._lastError = '';
    for (const cb of this.listeners) {
      try {
        cb(next, previous);
      } catch (err) {
        // A failing listener must not undo a good reload nor stop the others.
        this._lastError = `listener: ${messageOf(err)}`;
      }
    }
  }
}
