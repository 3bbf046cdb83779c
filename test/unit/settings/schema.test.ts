import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { defaultSettings, settingsSchema, WEBHOOK_EVENTS } from '../../../src/settings/schema.js';
import { lintSettings } from '../../../src/settings/lint.js';
import { parseSettingsText } from '../../../src/settings/load.js';
import { isOsmError, type OsmError } from '../../../src/errors.js';

function invalid(text: string): OsmError {
  try {
    parseSettingsText(text, '/tmp/osm-base');
  } catch (err) {
    if (isOsmError(err)) return err;
    throw err;
  }
  throw new Error('expected settingsInvalid');
}

describe('settings schema defaults', () => {
  it('fills every section from an empty object', () => {
    const d = defaultSettings();
    expect(d.server.port).toBe(8002);
    expect(d.server.host).toBe('127.0.0.1');
    expect(d.server.jwt.expiration_minutes).toBe(1440);
    expect(d.server.enabled_auth_api).toBe(true);
    expect(d.server.auth_api_key).toBe('');
    expect(d.server.simple_user_map_key).toEqual({});
    expect(d.server.max_concurrent_runs).toBe(availableParallelism());
    expect(d.server.max_body_mb).toBe(4);
    expect(d.server.max_upload_mb).toBe(512);
    expect(d.server.max_snapshot_mb).toBe(2048);
    expect(d.database.db_engine).toBe('sqlite');
    expect(d.database.port).toBe(5432);
    expect(d.database.password).toBe('');
    expect(d.scan_tactic).toEqual({ aggressive: 40, default: 10, gently: 5 });
    expect(d.redis.port).toBe(6379);
    expect(d.notification.enabled).toBe(false);
    expect(d.notification.webhooks).toEqual([]);
    expect(d.storage.region).toBe('us-east-1');
    expect(d.storage.use_ssl).toBe(true);
    expect(d.storage.presign_expiry).toBe('1h');
    expect(d.llm_config.llm_providers[0]!.provider).toBe('ollama');
    expect(d.llm_config.timeout).toBe('120s');
    expect(d.environments.workspaces).toBe('{{base_folder}}/workspaces');
  });

  it('validates a minimal file and keeps given values', () => {
    const loaded = parseSettingsText('base_folder: x\nserver:\n  port: 9000\n', '/tmp/osm-base');
    expect(loaded.settings.server.port).toBe(9000);
    expect(loaded.settings.server.host).toBe('127.0.0.1');
    expect(loaded.settings.scan_tactic.default).toBe(10);
    expect(loaded.warnings).toEqual([]);
  });

  it('treats an empty file and empty sections as defaults', () => {
    expect(parseSettingsText('', '/tmp/b').settings.server.port).toBe(8002);
    const loaded = parseSettingsText('server:\nglobal_vars:\nnotification:\n  webhooks:\n', '/tmp/b');
    expect(loaded.settings.server.port).toBe(8002);
    expect(loaded.settings.global_vars).toEqual({});
    expect(loaded.settings.notification.webhooks).toEqual([]);
  });

  it('accepts YAML numbers where strings are expected (passwords, global vars)', () => {
    const s = parseSettingsText('server:\n  simple_user_map_key:\n    admin: 123456\nglobal_vars:\n  X: {value: 42}\n', '/b').settings;
    expect(s.server.simple_user_map_key.admin).toBe('123456');
    expect(s.global_vars.X).toEqual({ value: '42', as_env: true });
  });

  it('applies webhook defaults and restricts events', () => {
    const s = parseSettingsText('notification:\n  webhooks:\n    - url: https://h.example/x\n', '/b').settings;
    expect(s.notification.webhooks[0]).toEqual({
      url: 'https://h.example/x', enabled: false, headers: {}, timeout: 30, retry_count: 3, skip_tls_verify: false, events: [],
    });
    expect(WEBHOOK_EVENTS).toEqual(['workflow_completed', 'workflow_failed', 'workflow_cancelled']);
    const err = invalid('notification:\n  webhooks:\n    - url: https://h/x\n      events: [workflow_done]\n');
    expect(err.message).toContain('notification.webhooks.0.events.0:');
  });

  it('reports every invalid value at once, each as path: message', () => {
    const err = invalid([
      'server:',
      '  port: abc',
      '  jwt:',
      '    expiration_minutes: -5',
      'scan_tactic: {aggressive: 1.5}',
      'database:',
      '  db_engine: oracle',
      'notification:',
      '  webhooks:',
      '    - enabled: true',
      '    - url: ftp://x',
      'llm_config:',
      '  temperature: 3',
      '  timeout: soon',
    ].join('\n'));
    expect(err.code).toBe('OSM_ERR_SETTINGS_INVALID');
    expect(err.message).toMatch(/^Invalid YAML configuration: /);
    const detail = err.message.replace(/^Invalid YAML configuration: /, '');
    const paths = detail.split('; ').map((p) => p.split(':')[0]);
    expect(paths).toEqual(expect.arrayContaining([
      'server.port', 'server.jwt.expiration_minutes', 'scan_tactic.aggressive', 'database.db_engine',
      'notification.webhooks.0.url', 'notification.webhooks.1.url', 'llm_config.temperature', 'llm_config.timeout',
    ]));
    expect(paths).toHaveLength(8);
  });

  it('reports YAML syntax errors with their line', () => {
    const err = invalid('server:\n  port: 1\n bad: [\n');
    expect(err.code).toBe('OSM_ERR_SETTINGS_INVALID');
    expect(err.message).toMatch(/line \d+/);
  });

  it('rejects a non-mapping document', () => {
    expect(invalid('- a\n- b\n').message).toContain('(root)');
  });

  it('tolerates unknown keys but lints them as warnings', () => {
    const loaded = parseSettingsText('sever:\n  port: 1\nserver:\n  prot: 2\n  jwt: {algo: x}\nnotification:\n  webhooks:\n    - {url: "http://a", extra: 1}\n', '/b');
    expect(loaded.settings.server.port).toBe(8002);
    expect(loaded.warnings).toEqual([
      'unknown key ignored: sever',
      'unknown key ignored: server.prot',
      'unknown key ignored: server.jwt.algo',
      'unknown key ignored: notification.webhooks.0.extra',
    ]);
    // records accept any key
    expect(lintSettings({ global_vars: { ANY: { value: 'x' } }, server: { simple_user_map_key: { bob: 'x' } } })).toEqual([]);
  });

  it('parses through the schema directly', () => {
    expect(settingsSchema.safeParse({ server: { port: 70000 } }).success).toBe(false);
  });
});
