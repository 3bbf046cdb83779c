/** The db_import_<tool> workflow functions: every one the catalogue lists stores rows; none answers success doing nothing. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluate } from '../../../src/engine/js-runtime.js';
import { FUNCTION_CATALOG } from '../../../src/engine/functions/catalog.js';
import { openStore, type Store } from '../../../src/store/index.js';
import { ROOT } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

const fx = (name: string) => path.join(ROOT, 'test/fixtures/tools', name);
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function fileStore(): { store: Store; dir: string } {
  const t = tempDir();
  const store = openStore(path.join(t.dir, 'db.sqlite'));
  cleanups.push(() => store.close(), t.cleanup);
  return { store, dir: t.dir };
}
function ev(store: Store | undefined, script: string, logs: string[] = []) {
  return evaluate(script, { Workspace: 'ws' }, { ctx: { store, log: (l) => logs.push(l) } }).value as Record<string, unknown>;
}
const q = (s: string) => JSON.stringify(s);
const count = (s: Store, table: string) => (s.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE workspace = 'ws'`).get() as { n: number }).n;

/** Each db_import_<tool> function and the fixture it reads: [call, assets, findings]. */
const CALLS: Record<string, [string, number, number]> = {
  db_import_nmap: [`db_import_nmap('ws', ${q(fx('nmap.xml'))})`, 5, 0],
  db_import_masscan: [`db_import_masscan('ws', ${q(fx('masscan.json'))})`, 5, 0],
  db_import_naabu: [`db_import_naabu('ws', ${q(fx('naabu.jsonl'))})`, 6, 0],
  db_import_subfinder: [`db_import_subfinder('ws', ${q(fx('subfinder.jsonl'))})`, 3, 0],
  db_import_dnsx: [`db_import_dnsx('ws', ${q(fx('dnsx.jsonl'))})`, 2, 0],
  db_import_whatweb: [`db_import_whatweb('ws', ${q(fx('whatweb.json'))})`, 2, 0],
  db_import_ffuf: [`db_import_ffuf('ws', ${q(fx('ffuf.json'))})`, 4, 0],
  db_import_gobuster: [`db_import_gobuster('ws', ${q(fx('gobuster.txt'))}, 'http://127.0.0.1:46515')`, 4, 0],
  db_import_katana: [`db_import_katana('ws', ${q(fx('katana.jsonl'))})`, 3, 0],
  db_import_testssl: [`db_import_testssl('ws', ${q(fx('testssl.json'))})`, 0, 5],
  db_import_sslscan: [`db_import_sslscan('ws', ${q(fx('sslscan.xml'))})`, 1, 4],
  db_import_sarif: [`db_import_sarif('ws', ${q(fx('sarif.json'))})`, 0, 2],
  db_import_tool: [`db_import_tool('ffuf', 'ws', ${q(fx('ffuf.json'))})`, 4, 0],
};

describe('db_import_<tool> functions', () => {
  for (const [name, [call, nAssets, nVulns]] of Object.entries(CALLS)) {
    it(`${name} stores the file's rows and dedupes a second call`, () => {
      const { store } = fileStore();
      const first = ev(store, call);
      expect(first).toMatchObject({ errors: 0 });
      expect(ev(store, call)).toMatchObject({ new: 0, updated: 0, unchanged: Number(first.new) + Number(first.updated) + Number(first.unchanged) });
      expect([count(store, 'assets'), count(store, 'vulnerabilities')]).toEqual([nAssets, nVulns]);
    });
  }

  it('every db_import_* function the catalogue lists is covered here or by database-functions.test.ts', () => {
    const elsewhere = ['db_import_asset', 'db_import_asset_from_file', 'db_import_vuln', 'db_import_vuln_from_file', 'db_import_custom_asset', 'db_import_port_assets', 'db_import_dns_asset'];
    const listed = FUNCTION_CATALOG.filter((e) => e.name.startsWith('db_import_')).map((e) => e.name);
    for (const n of listed) expect([...Object.keys(CALLS), ...elsewhere], n).toContain(n);
  });

  it('db_import_port_assets stores what nmap_to_jsonl wrote (it answered an error string and stored nothing before)', () => {
    const { store, dir } = fileStore();
    const ports = path.join(dir, 'ports.jsonl');
    expect(ev(store, `nmap_to_jsonl(${q(fx('nmap.xml'))}, ${q(ports)})`)).toBe(true);
    expect(ev(store, `db_import_port_assets('ws', ${q(ports)})`)).toMatchObject({ new: 5, errors: 0 });
    const host = store.assets.list({ workspace: 'ws', asset_type: 'ip' }, { offset: 0, limit: 10 }).data[0]!;
    expect(host).toMatchObject({ asset_value: '127.0.0.1', source: 'portscan', open_ports: ['5432/tcp', '6379/tcp', '39557/tcp', '46515/tcp'] });
    expect(JSON.parse(host.port_json_data)['6379']).toMatchObject({ service: 'redis', product: 'Redis key-value store', version: '7.0.15' });
    expect(ev(store, `db_import_port_assets('ws', ${q(ports)})`)).toMatchObject({ new: 0, unchanged: 5 });
  });

  it('db_import_dns_asset answers the number of domain assets stored', () => {
    const { store } = fileStore();
    expect(ev(store, `db_import_dns_asset('ws', ${q(fx('dns-zone.txt'))})`)).toBe(2);
    expect(store.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 }).data.map((a) => [a.asset_value, a.source]).sort()).toEqual([
      ['api.example.com', 'dns'],
      ['www.example.com', 'dns'],
    ]);
    expect(ev(store, `db_import_dns_asset('ws', '/no/such/file')`)).toBe(0);
  });

  it('a missing file or database answers the stats shape with an error and logs a warning', () => {
    const { store } = fileStore();
    const logs: string[] = [];
    expect(ev(store, `db_import_nmap('ws', '/no/such/scan.xml')`, logs)).toMatchObject({ new: 0, error: 'Import file not found: /no/such/scan.xml' });
    expect(logs).toEqual(['[WARN] db_import_nmap: Import file not found: /no/such/scan.xml']);
    expect(ev(undefined, `db_import_ffuf('ws', ${q(fx('ffuf.json'))})`)).toMatchObject({ error: 'workspace, file_path and a database are required' });
    expect(ev(store, `db_import_tool('nessus', 'ws', ${q(fx('ffuf.json'))})`).error).toMatch(/^unknown tool 'nessus': supported tools are nmap, /);
  });

  it('db_import_vigolium (format unpublished) is not listed and fails loudly when called', () => {
    expect(FUNCTION_CATALOG.find((e) => e.name === 'db_import_vigolium')).toBeUndefined();
    const { store } = fileStore();
    expect(() => ev(store, `db_import_vigolium('ws', '/tmp/x.jsonl')`)).toThrow(/not supported in osm: db_import_vigolium/);
  });
});
