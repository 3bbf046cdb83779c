import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { getSettingValue, setSettingValue } from '../../../src/settings/set.js';
import { generateSettingsText, parseSettingsText } from '../../../src/settings/load.js';
import { isOsmError } from '../../../src/errors.js';

let tmp: string;
let file: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  file = path.join(tmp, 'osm-settings.yaml');
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

function write(text: string) {
  fs.writeFileSync(file, text, { mode: 0o600 });
}
const read = () => fs.readFileSync(file, 'utf8');
const data = () => parse(read());

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (!isOsmError(err)) throw err;
    return err.message;
  }
  throw new Error('expected an OsmError');
}

describe('setSettingValue', () => {
  it('edits only the value token, keeping comments and layout, and backs up the previous file', () => {
    const before = '# head comment\nserver:\n  port: 8002   # the port\n  host: "0.0.0.0"  # host\nscan_tactic: {aggressive: 40, default: 10}\n';
    write(before);
    const res = setSettingValue(file, 'server.port', '9000');
    expect(res).toEqual({ key: 'server.port', value: 9000, backup: `${file}.backup` });
    expect(read()).toBe(before.replace('8002', '9000'));
    expect(fs.readFileSync(`${file}.backup`, 'utf8')).toBe(before);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    setSettingValue(file, 'server.host', '127.0.0.1');
    expect(read()).toContain('  host: "127.0.0.1"  # host\n');
    setSettingValue(file, 'scan_tactic.default', '12');
    expect(read()).toContain('scan_tactic: {aggressive: 40, default: 12}\n');
    setSettingValue(file, 'scan_tactic.gently', '3'); // new key: whole document re-serialised, comments kept
    expect(read()).toContain('# head comment');
    expect(read()).toContain('# the port');
    expect(data().scan_tactic).toEqual({ aggressive: 40, default: 12, gently: 3 });
  });

  it('types values by the schema', () => {
    write('server:\n  license: open\n');
    for (const [raw, want] of [['yes', true], ['0', false], ['TRUE', true], ['no', false], ['1', true], ['false', false]] as const) {
      setSettingValue(file, 'server.enable_metrics', raw);
      expect(data().server.enable_metrics).toBe(want);
    }
    setSettingValue(file, 'llm_config.temperature', '1.25');
    expect(data().llm_config.temperature).toBe(1.25);
    setSettingValue(file, 'server.license', 'true'); // a string field stays a string
    expect(data().server.license).toBe('true');
    setSettingValue(file, 'server.license', '8002');
    expect(data().server.license).toBe('8002');
    setSettingValue(file, 'llm_config.system_prompt', 'You are: "helpful", # really');
    expect(data().llm_config.system_prompt).toBe('You are: "helpful", # really');
    setSettingValue(file, 'notification.telegram.chat_id', '-100123');
    expect(data().notification.telegram.chat_id).toBe(-100123);
    setSettingValue(file, 'notification.telegram.chat_id', '@channel');
    expect(data().notification.telegram.chat_id).toBe('@channel');
    expect(parseSettingsText(read(), tmp).settings.server.license).toBe('8002');
  });

  it('rejects bad values without touching the file', () => {
    write('server:\n  port: 8002 # keep\n');
    const before = read();
    expect(failure(() => setSettingValue(file, 'server.port', 'abc'))).toBe('server.port must be a number');
    expect(failure(() => setSettingValue(file, 'server.port', '1.5'))).toBe('server.port must be a whole number');
    expect(failure(() => setSettingValue(file, 'server.enable_metrics', 'maybe'))).toMatch(/must be a boolean/);
    expect(failure(() => setSettingValue(file, 'server.port', '70000'))).toMatch(/^Invalid YAML configuration: server\.port: /);
    expect(failure(() => setSettingValue(file, 'database.db_engine', 'oracle'))).toMatch(/database\.db_engine/);
    expect(failure(() => setSettingValue(file, 'llm_config.timeout', 'soon'))).toMatch(/llm_config\.timeout/);
    expect(read()).toBe(before);
    expect(fs.existsSync(`${file}.backup`)).toBe(false);
  });

  it('rejects unknown sections, fields and non-leaf keys', () => {
    write('server:\n  port: 8002\n');
    expect(failure(() => setSettingValue(file, 'sever.port', '1'))).toBe('unknown config section: sever');
    expect(failure(() => setSettingValue(file, 'server.prot', '1'))).toBe('unknown server field: prot');
    expect(failure(() => setSettingValue(file, 'server.jwt.algo', 'x'))).toBe('unknown server.jwt field: algo');
    expect(failure(() => setSettingValue(file, 'server', '1'))).toMatch(/is a section/);
    expect(failure(() => setSettingValue(file, 'server.jwt', '1'))).toMatch(/is a section/);
    expect(failure(() => setSettingValue(file, 'server.port.x', '1'))).toMatch(/is a value, not a section/);
    expect(failure(() => setSettingValue(file, 'server..port', '1'))).toMatch(/invalid config key/);
    expect(failure(() => setSettingValue(file, 'notification.webhooks.first.url', 'x'))).toMatch(/is a list/);
    expect(read()).toBe('server:\n  port: 8002\n');
  });

  it('extends lists by one and refuses gaps', () => {
    write('notification:\n  enabled: false\n  webhooks: []\nllm_config:\n  llm_providers:\n    - provider: ollama # local\n      model: a\n');
    setSettingValue(file, 'notification.webhooks.0.url', 'https://h.example/a');
    setSettingValue(file, 'notification.webhooks.0.enabled', 'true');
    setSettingValue(file, 'notification.webhooks.1.url', 'https://h.example/b');
    setSettingValue(file, 'notification.webhooks.1.headers.Authorization', 'Bearer x');
    expect(data().notification.webhooks).toEqual([
      { url: 'https://h.example/a', enabled: true },
      { url: 'https://h.example/b', headers: { Authorization: 'Bearer x' } },
    ]);
    expect(read()).toContain('  webhooks:\n    - url: https://h.example/a\n');
    expect(failure(() => setSettingValue(file, 'notification.webhooks.3.url', 'https://x'))).toMatch(/out of range.*has 2 items/);
    // a new webhook without url is not a valid entry
    expect(failure(() => setSettingValue(file, 'notification.webhooks.2.enabled', 'true'))).toMatch(/notification\.webhooks\.2\.url: required/);
    setSettingValue(file, 'llm_config.llm_providers.0.model', 'b');
    setSettingValue(file, 'llm_config.llm_providers.1.model', 'c');
    expect(read()).toContain('# local');
    expect(data().llm_config.llm_providers).toEqual([{ provider: 'ollama', model: 'b' }, { model: 'c' }]);
  });

  it('creates missing or empty sections', () => {
    write('global_vars:\nserver:\n  port: 1\n');
    setSettingValue(file, 'global_vars.NEW_TOKEN', 'abc');
    setSettingValue(file, 'redis.host', 'localhost');
    expect(data().global_vars).toEqual({ NEW_TOKEN: { value: 'abc' } });
    expect(parseSettingsText(read(), tmp).settings.global_vars.NEW_TOKEN).toEqual({ value: 'abc', as_env: true });
    expect(data().redis).toEqual({ host: 'localhost' });
  });

  it('global_vars.NAME sets the value and keeps as_env', () => {
    write('global_vars:\n  SHODAN_API_KEY: {value: "", as_env: false}\n');
    setSettingValue(file, 'global_vars.SHODAN_API_KEY', 'k-1');
    expect(read()).toBe('global_vars:\n  SHODAN_API_KEY: {value: "k-1", as_env: false}\n');
    setSettingValue(file, 'global_vars.SHODAN_API_KEY.as_env', 'yes');
    expect(data().global_vars.SHODAN_API_KEY).toEqual({ value: 'k-1', as_env: true });
  });

  it('server.username renames the primary user, server.password sets its password', () => {
    write('server:\n  simple_user_map_key:\n    alice: a1\n    osmedeus: o1 # primary\n');
    setSettingValue(file, 'server.username', 'admin');
    expect(read()).toBe('server:\n  simple_user_map_key:\n    alice: a1\n    admin: o1 # primary\n');
    // no `osmedeus` any more: the alphabetically first user is primary
    setSettingValue(file, 'server.password', 'new-pw');
    expect(data().server.simple_user_map_key).toEqual({ alice: 'a1', admin: 'new-pw' });
    expect(failure(() => setSettingValue(file, 'server.username', 'alice'))).toBe('user already exists: alice');
    expect(getSettingValue(data(), 'server.username')).toBe('admin');
    expect(getSettingValue(data(), 'server.password')).toBe('new-pw');
    write('server:\n  port: 1\n');
    expect(failure(() => setSettingValue(file, 'server.username', 'x'))).toMatch(/no user to rename/);
    setSettingValue(file, 'server.password', 'pw');
    expect(data().server.simple_user_map_key).toEqual({ osmedeus: 'pw' });
  });

  it('works on a generated settings file', () => {
    write(generateSettingsText(tmp));
    const before = read();
    setSettingValue(file, 'server.port', '9100');
    const after = read();
    expect(after.split('\n').filter((l, i) => l !== before.split('\n')[i])).toEqual(['  port: 9100']);
  });

  it('refuses to edit a file that is not valid YAML', () => {
    write('server:\n  port: [\n');
    expect(failure(() => setSettingValue(file, 'server.port', '1'))).toMatch(/^Invalid YAML configuration: line/);
  });
});

describe('getSettingValue', () => {
  const s = parseSettingsText('notification:\n  webhooks:\n    - url: https://a/b\n', '/b').settings;
  it('walks objects and list indexes', () => {
    expect(getSettingValue(s, 'server.port')).toBe(8002);
    expect(getSettingValue(s, 'notification.webhooks.0.url')).toBe('https://a/b');
    expect(getSettingValue(s, 'scan_tactic')).toEqual({ aggressive: 40, default: 10, gently: 5 });
  });
  it('throws for unknown keys', () => {
    expect(failure(() => getSettingValue(s, 'server.nope'))).toBe('unknown config key: server.nope');
    expect(failure(() => getSettingValue(s, 'notification.webhooks.5.url'))).toMatch(/unknown config key/);
    expect(failure(() => getSettingValue(s, 'server.username'))).toMatch(/no user configured/);
  });
});
