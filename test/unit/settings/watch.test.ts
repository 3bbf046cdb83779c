import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '../../../src/settings/load.js';
import { SettingsManager } from '../../../src/settings/watch.js';
import { isOsmError } from '../../../src/errors.js';

let tmp: string;
let manager: SettingsManager | undefined;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
});
afterEach(async () => {
  await manager?.close();
  manager = undefined;
  fs.rmSync(tmp, { recursive: true, force: true });
});

function setup(text = 'server:\n  port: 8100\n'): SettingsManager {
  fs.writeFileSync(path.join(tmp, 'osm-settings.yaml'), text, { mode: 0o600 });
  manager = new SettingsManager(loadSettings({ baseFolder: tmp }), { baseFolder: tmp });
  return manager;
}

/** Polls until `cond` holds; fails after a generous bound (a liveness check, not a timing assertion). */
async function eventually(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

describe('SettingsManager', () => {
  it('starts at version 1 with no error', () => {
    const m = setup();
    expect(m.version).toBe(1);
    expect(m.lastError).toBe('');
    expect(m.path).toBe(path.join(tmp, 'osm-settings.yaml'));
    expect(m.isWatching).toBe(false);
    expect(Number.isNaN(Date.parse(m.lastReload))).toBe(false);
    expect(m.current.settings.server.port).toBe(8100);
  });

  it('reload picks up a change and notifies listeners', () => {
    const m = setup();
    const seen: [number, number][] = [];
    const off = m.onChange((next, prev) => seen.push([prev.settings.server.port, next.settings.server.port]));
    fs.writeFileSync(m.path, 'server:\n  port: 8200\n');
    const next = m.reload();
    expect(next.settings.server.port).toBe(8200);
    expect(m.current.settings.server.port).toBe(8200);
    expect(m.version).toBe(2);
    expect(seen).toEqual([[8100, 8200]]);
    off();
    m.reload();
    expect(seen).toHaveLength(1);
    expect(m.version).toBe(3);
  });

  it('a bad file keeps the old config, sets lastError and throws settingsReload', () => {
    const m = setup();
    fs.writeFileSync(m.path, 'server:\n  port: nope\n');
    let code = '';
    try {
      m.reload();
    } catch (err) {
      code = isOsmError(err) ? err.code : 'not-osm';
    }
    expect(code).toBe('OSM_ERR_SETTINGS_RELOAD');
    expect(m.current.settings.server.port).toBe(8100);
    expect(m.version).toBe(1);
    expect(m.lastError).toContain('server.port');
    fs.writeFileSync(m.path, 'server:\n  port: 8300\n');
    m.reload();
    expect(m.lastError).toBe('');
    expect(m.current.settings.server.port).toBe(8300);
  });

  it('replaceText validates first and leaves the file untouched when invalid', () => {
    const m = setup('# mine\nserver:\n  port: 8100\n');
    const before = fs.readFileSync(m.path, 'utf8');
    let code = '';
    try {
      m.replaceText('server:\n  port: 99999\n  host: [\n');
    } catch (err) {
      code = isOsmError(err) ? err.code : 'not-osm';
    }
    expect(code).toBe('OSM_ERR_SETTINGS_INVALID');
    expect(fs.readFileSync(m.path, 'utf8')).toBe(before);
    expect(fs.existsSync(`${m.path}.backup`)).toBe(false);
    expect(m.version).toBe(1);
  });

  it('replaceText backs up, writes 0600 and reloads', () => {
    const m = setup('# mine\nserver:\n  port: 8100\n');
    const res = m.replaceText('server:\n  port: 8400\n');
    expect(res).toEqual({ path: m.path, backup: `${m.path}.backup` });
    expect(fs.readFileSync(res.backup, 'utf8')).toBe('# mine\nserver:\n  port: 8100\n');
    expect(fs.readFileSync(m.path, 'utf8')).toBe('server:\n  port: 8400\n');
    expect(fs.statSync(m.path).mode & 0o777).toBe(0o600);
    expect(m.current.settings.server.port).toBe(8400);
    expect(m.version).toBe(2);
  });

  it('watch() reloads after an external write, and a bad write only records lastError', async () => {
    const m = setup();
    await m.watch();
    expect(m.isWatching).toBe(true);
    fs.writeFileSync(m.path, 'server:\n  port: 8500\n');
    await eventually(() => m.current.settings.server.port === 8500, 'reload after write');
    expect(m.version).toBeGreaterThanOrEqual(2);

    fs.writeFileSync(m.path, 'server:\n  port: broken\n');
    await eventually(() => m.lastError !== '', 'lastError after a bad write');
    expect(m.lastError).toContain('server.port');
    expect(m.current.settings.server.port).toBe(8500);

    // an atomic replace (rename over the file) is seen too
    const tmpFile = `${m.path}.tmp-new`;
    fs.writeFileSync(tmpFile, 'server:\n  port: 8600\n');
    fs.renameSync(tmpFile, m.path);
    await eventually(() => m.current.settings.server.port === 8600, 'reload after rename');
    expect(m.lastError).toBe('');

    await m.close();
    expect(m.isWatching).toBe(false);
  });
});
