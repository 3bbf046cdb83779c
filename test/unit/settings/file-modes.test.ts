/**
 * File modes of a base folder: the folder itself 0700 (it holds the database, workspaces and the
 * settings secrets), the settings file and the database with its -wal and -shm files 0600 —
 * whatever the process umask. An existing folder with looser modes gets a warning (it may be
 * shared on purpose), existing database files are tightened.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppContext } from '../../../src/services/context.js';
import { loadSettings } from '../../../src/settings/index.js';
import { openStore } from '../../../src/store/index.js';
import { tempDir } from '../../helpers/tmp.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function root(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

/** Runs `fn` under a permissive umask, as a shell with `umask 000` would start osm. */
function withUmask<T>(mask: number, fn: () => T): T {
  const old = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(old);
  }
}

describe('file modes of a fresh base folder', () => {
  it('base 0700; settings, database, -wal and -shm 0600, even under umask 000', () => {
    const base = path.join(root(), 'nested', 'base');
    const app = withUmask(0, () => {
      const a = createAppContext({ baseFolder: base });
      // A write so the WAL holds something; the -shm exists from the first WAL access.
      a.store.events.insert({ topic: 'test', source: 'test', data: '{}', workspace: '', run_id: '', workflow_name: '', processed: false });
      return a;
    });
    cleanups.push(() => app.close());
    const db = app.settings().paths.db;
    expect(modeOf(base)).toBe(0o700);
    expect(modeOf(path.join(base, 'osm-settings.yaml'))).toBe(0o600);
    expect(modeOf(db)).toBe(0o600);
    expect(modeOf(`${db}-wal`)).toBe(0o600);
    expect(modeOf(`${db}-shm`)).toBe(0o600);
    // The folders above the base are ordinary ones.
    expect(modeOf(path.dirname(base))).not.toBe(0o700);
  });

  it('tightens database files left with looser modes, and warns about a shared base folder without changing it', () => {
    const base = path.join(root(), 'shared');
    fs.mkdirSync(base, { mode: 0o755 });
    fs.chmodSync(base, 0o755);
    const first = createAppContext({ baseFolder: base });
    const db = first.settings().paths.db;
    first.close();
    for (const f of [db, `${db}-wal`, `${db}-shm`]) if (fs.existsSync(f)) fs.chmodSync(f, 0o644);
    const store = openStore(db);
    cleanups.push(() => store.close());
    for (const f of [db, `${db}-wal`, `${db}-shm`]) expect(modeOf(f), f).toBe(0o600);
    const loaded = loadSettings({ baseFolder: base });
    expect(loaded.warnings).toContain(`base folder ${base} is accessible by other users (mode 755); it holds the database, workspaces and secrets, consider chmod 700`);
    expect(modeOf(base)).toBe(0o755);
  });
});
