/** Shared fixtures for the store tests: temp folders and stores that clean up after themselves. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { openStore, type Store } from '../../../src/store/index.js';

const cleanups: (() => void)[] = [];

afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!();
});

/** A fresh temp folder removed after the test. */
export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An in-memory store closed after the test. */
export function memStore(): Store {
  const store = openStore(':memory:');
  cleanups.push(() => store.close());
  return store;
}

/** A store on a file in a fresh temp folder, closed (before the folder goes) after the test. */
export function fileStore(dir = tempDir(), name = 'db/osm.sqlite'): { store: Store; file: string; dir: string } {
  const file = path.join(dir, name);
  const store = openStore(file);
  cleanups.push(() => store.close());
  return { store, file, dir };
}

/** Registers extra cleanup work. */
export function onCleanup(fn: () => void): void {
  cleanups.push(fn);
}

export const page = (offset = 0, limit = 100) => ({ offset, limit });
