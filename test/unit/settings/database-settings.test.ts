/** `database.*` for PostgreSQL: validation, OSM_DATABASE_URL, and the URL's password masked everywhere. */
import { describe, expect, it } from 'vitest';
import { databaseSchema } from '../../../src/settings/schema.js';
import { maskUrlPassword, redactSettings, redactYamlText, settingsSecretValues, REDACTED } from '../../../src/settings/redact.js';
import { dbEngineOf, pgTargetFromSettings, pgTarget } from '../../../src/store/pg/config.js';
import { mergeRedactedSecrets } from '../../../src/services/settings.js';

describe('database settings', () => {
  it('validate engine, ssl_mode and url', () => {
    expect(databaseSchema.parse({}).db_engine).toBe('sqlite');
    expect(databaseSchema.parse({ db_engine: 'postgresql', url: 'postgres://u:p@db:5432/osm', ssl_mode: 'require' })).toMatchObject({ db_engine: 'postgresql', ssl_mode: 'require' });
    expect(databaseSchema.safeParse({ db_engine: 'mysql' }).success).toBe(false);
    expect(databaseSchema.safeParse({ ssl_mode: 'sometimes' }).success).toBe(false);
    expect(databaseSchema.safeParse({ url: 'mysql://db/osm' }).success).toBe(false);
    expect(databaseSchema.safeParse({ url: 'not a url' }).success).toBe(false);
  });

  it('OSM_DATABASE_URL overrides database.url and the fields, and selects PostgreSQL', () => {
    const db = databaseSchema.parse({ db_engine: 'sqlite', host: 'h1', port: 5433, username: 'osm', password: 'p@ss word', db_name: 'base', ssl_mode: 'require' });
    expect(dbEngineOf(db, {})).toBe('sqlite');
    const fromFields = pgTargetFromSettings(db, {});
    expect(fromFields).toMatchObject({ host: 'h1', port: 5433, database: 'base', user: 'osm' });
    expect(fromFields.url).toBe('postgresql://osm:p%40ss%20word@h1:5433/base?sslmode=require');
    expect(fromFields.display).toBe(`postgresql://osm:${REDACTED}@h1:5433/base?sslmode=require`);
    expect(pgTargetFromSettings({ ...db, url: 'postgres://a:b@h2/x' }, {}).host).toBe('h2');
    const env = { OSM_DATABASE_URL: 'postgresql://e:secretpw@h3:6000/envdb' };
    expect(dbEngineOf(db, env)).toBe('postgresql');
    expect(pgTargetFromSettings({ ...db, url: 'postgres://a:b@h2/x' }, env)).toMatchObject({ host: 'h3', port: 6000, database: 'envdb' });
    expect(() => pgTarget('http://x')).toThrow(/not a postgres/);
  });

  it('mask the URL password in objects, YAML text and the secret list; [REDACTED] URLs are restored on PUT', () => {
    expect(maskUrlPassword('postgres://osm:hunter22@db:5432/osm?sslmode=require&password=x')).toBe(`postgres://osm:${REDACTED}@db:5432/osm?sslmode=require&password=${REDACTED}`);
    expect(maskUrlPassword('postgres://db/osm')).toBe('postgres://db/osm');
    expect(maskUrlPassword('::garbage::')).toBe(REDACTED);
    const settings = { database: { url: 'postgres://osm:hunter22@db:5432/osm', password: 'pw123456' } };
    expect(redactSettings(settings)).toEqual({ database: { url: `postgres://osm:${REDACTED}@db:5432/osm`, password: REDACTED } });
    const yaml = 'database:\n  password: pw123456\n  url: postgres://osm:hunter22@db:5432/osm # shared\n';
    const shown = redactYamlText(yaml);
    expect(shown).not.toContain('hunter22');
    expect(shown).not.toContain('pw123456');
    expect(shown).toContain(`postgres://osm:${REDACTED}@db:5432/osm`);
    expect(settingsSecretValues(settings)).toContain('hunter22');
    // The redacted text sent back keeps the real URL; a different host with a masked password is refused.
    expect(mergeRedactedSecrets(shown, yaml)).toContain('postgres://osm:hunter22@db:5432/osm');
    expect(() => mergeRedactedSecrets(shown.replace('@db:', '@other:'), yaml)).toThrow(/database\.url/);
  });
});

describe('osm config set database.*', () => {
  it('validates before writing', async () => {
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { setSettingValue } = await import('../../../src/settings/set.js');
    const { generateSettingsText } = await import('../../../src/settings/load.js');
    const dir = mkdtempSync(join(tmpdir(), 'osm-dbset-'));
    try {
      const file = join(dir, 'osm-settings.yaml');
      writeFileSync(file, generateSettingsText(dir), { mode: 0o600 });
      setSettingValue(file, 'database.db_engine', 'postgresql');
      setSettingValue(file, 'database.url', 'postgres://osm:pw@db:5432/osm');
      setSettingValue(file, 'database.ssl_mode', 'verify-full');
      const before = readFileSync(file, 'utf8');
      expect(() => setSettingValue(file, 'database.db_engine', 'oracle')).toThrow();
      expect(() => setSettingValue(file, 'database.ssl_mode', 'maybe')).toThrow();
      expect(() => setSettingValue(file, 'database.url', 'http://db/osm')).toThrow(/postgres/);
      expect(readFileSync(file, 'utf8')).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
