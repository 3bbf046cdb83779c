import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { isSecretPath, REDACTED, redactSettings, redactYamlLines, redactYamlText } from '../../../src/settings/redact.js';
import { generateSettingsText, parseSettingsText } from '../../../src/settings/load.js';

describe('isSecretPath', () => {
  it.each([
    [['server', 'auth_api_key']],
    [['server', 'workspace_prefix_key']],
    [['server', 'jwt', 'secret_signing_key']],
    [['database', 'password']],
    [['database', 'username']],
    [['redis', 'password']],
    [['notification', 'telegram', 'bot_token']],
    [['storage', 'access_key_id']],
    [['storage', 'secret_access_key']],
    [['llm_config', 'llm_providers', 0, 'auth_token']],
    [['llm_config', 'custom_headers']],
    [['server', 'simple_user_map_key', 'alice']],
    [['global_vars', 'GITHUB_API_KEY', 'value']],
    [['global_vars', 'PLAIN_NAME', 'value']],
    [['notification', 'webhooks', 0, 'headers', 'Authorization']],
    [['notification', 'webhooks', 2, 'headers', 'X-Api-Key']],
    [['notification', 'webhooks', 0, 'headers', 'x-auth-token']],
    [['other', 'access_token']],
    [['other', 'token']],
    [['other', 'ApiKey']],
    [['other', 'key']],
    [['other', 'api_keys', 1]],
    [['other', 'api_keys', '1']],
    [['notification', 'webhooks', '0', 'headers', 'Authorization']],
    // Every webhook header and URL: hook URLs are credentials (Slack/Discord paths, ?token=).
    [['notification', 'webhooks', 0, 'headers', 'Content-Type']],
    [['notification', 'webhooks', 0, 'url']],
    [['database', 'url']],
    [['redis', 'url']],
  ])('%j is secret', (p) => {
    expect(isSecretPath(p)).toBe(true);
  });

  it.each([
    [['server', 'port']],
    [['global_vars', 'GITHUB_API_KEY', 'as_env']],
    [['llm_config', 'max_tokens']],
    [['llm_config', 'llm_providers', 0, 'model']],
    [['notification', 'webhooks', 0, 'timeout']],
    [['notification', 'telegram', 'chat_id']],
    [['notification', 'telegram', 'api_url']],
    [['server', 'enabled_auth_api']],
    [[]],
  ])('%j is not secret', (p) => {
    expect(isSecretPath(p)).toBe(false);
  });
});

describe('redactSettings', () => {
  it('redacts every secret of a loaded settings object, leaves empty values and originals alone', () => {
    const loaded = parseSettingsText(generateSettingsText('/b') + '', '/b');
    loaded.settings.global_vars.GITHUB_API_KEY!.value = 'ghp_x';
    loaded.settings.notification.webhooks.push({ url: 'https://h/x', enabled: true, headers: { Authorization: 'Bearer t', Accept: 'json' }, timeout: 30, retry_count: 3, skip_tls_verify: false, events: [] });
    loaded.settings.llm_config.llm_providers[0]!.auth_token = 'sk-1';
    const r = redactSettings(loaded.settings);
    expect(r.server.auth_api_key).toBe(REDACTED);
    expect(r.server.workspace_prefix_key).toBe(REDACTED);
    expect(r.server.jwt.secret_signing_key).toBe(REDACTED);
    expect(r.server.jwt.expiration_minutes).toBe(1440);
    expect(r.server.simple_user_map_key).toEqual({ osmedeus: REDACTED });
    expect(r.database.username).toBe(REDACTED);
    expect(r.database.password).toBe(''); // empty stays visible as empty
    expect(r.global_vars.GITHUB_API_KEY).toEqual({ value: REDACTED, as_env: true });
    expect(r.global_vars.SHODAN_API_KEY).toEqual({ value: '', as_env: true });
    expect(r.notification.webhooks[0]!.headers).toEqual({ Authorization: REDACTED, Accept: REDACTED });
    expect(r.notification.webhooks[0]!.url).toBe(REDACTED);
    expect(r.notification.webhooks[0]!.timeout).toBe(30);
    expect(r.llm_config.llm_providers[0]!.auth_token).toBe(REDACTED);
    expect(r.llm_config.max_tokens).toBe(1000);
    expect(r.server.port).toBe(8002);
    // deep copy: the original is untouched
    expect(loaded.settings.server.auth_api_key).toHaveLength(32);
    expect(loaded.settings.global_vars.GITHUB_API_KEY!.value).toBe('ghp_x');
  });
});

const SAMPLE = `# Settings with comments
base_folder: /b   # the base
server:
  port: 8002
  auth_api_key: "abc123"     # api key comment
  workspace_prefix_key: 'single'
  enabled_auth_api: true
  simple_user_map_key:
    osmedeus: plainpw
    "bob": "quotedpw"  # bob
  jwt: {secret_signing_key: flowsecret, expiration_minutes: 60}
database:
  username: ""
  password: ''
  host: localhost
redis:
  password:
global_vars:
  GITHUB_API_KEY:
    value: ghp_secret
    as_env: true
  SHODAN_API_KEY: {value: "shodan-secret", as_env: false}
  EMPTY: {value: "", as_env: true}
notification:
  telegram: {bot_token: "123:tg", chat_id: 42}
  webhooks:
  - url: https://hooks.example/a
    headers:
      Authorization: Bearer webhook-token
      Content-Type: application/json
  - {url: "https://hooks.example/b", headers: {X-Api-Key: k-flow}}
llm_config:
  max_tokens: 1000
  llm_providers:
    - provider: openai
      auth_token: sk-live-1
    - {provider: ollama, auth_token: ""}
  system_prompt: |
    not a secret
  custom_headers: "Authorization: Bearer llm"
other:
  password: |
    multi
    line secret
  api_keys: [k1, k2]
  anchored_secret: &s anchor-value
  token: *s
`;

const LEAKS = ['hooks.example', 'application/json', 'abc123', 'single', 'plainpw', 'quotedpw', 'flowsecret', 'ghp_secret', 'shodan-secret', '123:tg', 'webhook-token', 'k-flow', 'sk-live-1', 'Bearer llm', 'line secret', 'k1', 'k2', 'anchor-value'];

describe('redactYamlText', () => {
  const out = redactYamlText(SAMPLE);

  it('removes every secret value', () => {
    for (const leak of LEAKS) expect(out, leak).not.toContain(leak);
  });

  it('keeps layout, comments, non-secrets and empty values', () => {
    expect(out.split('\n')).toHaveLength(SAMPLE.split('\n').length - 2); // the secret 2-line block scalar became one line
    expect(out).toContain('# Settings with comments');
    expect(out).toContain('base_folder: /b   # the base');
    expect(out).toContain(`  auth_api_key: "${REDACTED}"     # api key comment`);
    expect(out).toContain(`  workspace_prefix_key: "${REDACTED}"`);
    expect(out).toContain(`    osmedeus: "${REDACTED}"`);
    expect(out).toContain(`    "bob": "${REDACTED}"  # bob`);
    expect(out).toContain(`  jwt: {secret_signing_key: "${REDACTED}", expiration_minutes: 60}`);
    expect(out).toContain(`  SHODAN_API_KEY: {value: "${REDACTED}", as_env: false}`);
    expect(out).toContain(`  EMPTY: {value: "", as_env: true}`);
    expect(out).toContain(`  username: ""`);
    expect(out).toContain(`  password: ''`);
    expect(out).toContain('redis:\n  password:\n');
    expect(out).toContain(`      Content-Type: "${REDACTED}"`);
    expect(out).toContain(`  - url: "${REDACTED}"`);
    expect(out).toContain(`  - {url: "${REDACTED}", headers: {X-Api-Key: "${REDACTED}"}}`);
    expect(out).toContain('  max_tokens: 1000');
    expect(out).toContain('    not a secret');
    expect(out).toContain(`  api_keys: ["${REDACTED}", "${REDACTED}"]`);
    expect(out).toContain(`  anchored_secret: &s "${REDACTED}"`);
    expect(out).toContain(`  password: "${REDACTED}"\n  api_keys`);
  });

  it('stays valid YAML with the same shape', () => {
    const a = parse(SAMPLE);
    const b = parse(out);
    expect(b.server.port).toBe(8002);
    expect(Object.keys(b)).toEqual(Object.keys(a));
    expect(b.notification.webhooks).toHaveLength(2);
    expect(b.global_vars.GITHUB_API_KEY).toEqual({ value: REDACTED, as_env: true });
  });

  it('redacts a generated settings file completely', () => {
    const text = generateSettingsText('/b');
    const secrets = parse(text).server;
    const red = redactYamlText(text);
    for (const v of [secrets.auth_api_key, secrets.jwt.secret_signing_key, secrets.simple_user_map_key.osmedeus, secrets.workspace_prefix_key]) {
      expect(red).not.toContain(v);
    }
    expect(red.split('\n')).toHaveLength(text.split('\n').length);
  });

  it('falls back to a line-based pass for invalid YAML, without leaking', () => {
    const broken = [
      'server:',
      '  auth_api_key: abc123 # c',
      '  simple_user_map_key:',
      '    osmedeus: plainpw',
      '  jwt: {secret_signing_key: flowsecret}',
      '  port: [unclosed',
      'global_vars:',
      '  X:',
      '    value: ghp_secret',
      '    as_env: true',
      'other:',
      '  password: |',
      '    line secret',
      '  host: h',
      'webhooks:',
      '  - url: u',
      '    headers:',
      '      Authorization: Bearer webhook-token',
    ].join('\n');
    const red = redactYamlText(broken);
    expect(red).toBe(redactYamlLines(broken));
    for (const leak of ['abc123', 'plainpw', 'flowsecret', 'ghp_secret', 'line secret', 'webhook-token']) expect(red, leak).not.toContain(leak);
    expect(red).toContain('  port: [unclosed');
    expect(red).toContain('    as_env: true');
    expect(red).toContain('  host: h');
    expect(red).toContain(`  auth_api_key: "${REDACTED}"`);
  });
});
