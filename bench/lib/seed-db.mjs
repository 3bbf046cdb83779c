/**
 * Seeds a migrated osm database with N assets and N vulnerabilities, fast: the rows are made by
 * SQLite itself (a recursive CTE); the tables' indexes and counter triggers are dropped for the
 * load and re-created from their own stored SQL afterwards, and the counters are recomputed the
 * way migration 002 backfills them — so the result is exactly the real schema, only built faster.
 * Half of the rows go to workspace `big`, the rest spread over `ws-00` … `ws-49`; severities and
 * status codes follow a fixed mix. Usage: node seed-db.mjs <db> <n>
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST } from './common.mjs';

const [dbPath, nText] = process.argv.slice(2);
const n = Number(nText);
const { openStore } = await import(pathToFileURL(path.join(DIST, 'store', 'index.js')).href);
const store = openStore(dbPath);
const db = store.db;
// A bigger page cache for the bulk load only (this connection).
db.pragma('cache_size = -262144');

const t0 = performance.now();
const BATCH = 100_000;
const saved = db
  .prepare(`SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ('assets', 'vulnerabilities') AND type IN ('index', 'trigger') AND sql IS NOT NULL`)
  .all();
for (const o of saved) db.exec(`DROP ${o.type.toUpperCase()} "${o.name}"`);
// i → workspace: even i → big, odd i → ws-(i/2 mod 50). created_at grows with i (1 ms apart).
const ws = `CASE WHEN i % 2 = 0 THEN 'big' ELSE printf('ws-%02d', (i / 2) % 50) END`;
const at = 'at';
const sev = `CASE (i / 100) % 10 WHEN 0 THEN 'critical' WHEN 1 THEN 'high' WHEN 2 THEN 'medium' WHEN 3 THEN 'medium' WHEN 4 THEN 'low' WHEN 5 THEN 'low' ELSE 'info' END`;
const status = `CASE (i / 100) % 8 WHEN 0 THEN 301 WHEN 1 THEN 302 WHEN 2 THEN 403 WHEN 3 THEN 404 WHEN 4 THEN 500 ELSE 200 END`;
// The timestamp is computed once per row (a materialized CTE), not once per column.
const seq = (from, to) => `WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to}),
  c AS MATERIALIZED (SELECT i, strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', printf('+%d.%03d seconds', i / 1000, i % 1000)) AS at FROM n)`;
for (let from = 0; from < n; from += BATCH) {
  const to = Math.min(n, from + BATCH) - 1;
  db.transaction(() => {
    db.exec(`${seq(from, to)}
      INSERT INTO assets (workspace, asset_value, url, input, scheme, method, path, status_code, content_type, content_length, title,
        words, lines, host_ip, a, asset_type, tech, time, source, raw_json_data, created_at, updated_at, last_seen_at)
      SELECT ${ws}, printf('h%d.seed.example.com', i), printf('https://h%d.seed.example.com', i), printf('h%d.seed.example.com', i),
        'https', 'GET', '/', ${status}, 'text/html', 1000 + i % 5000, 'Welcome', 120, 20, printf('10.%d.%d.%d', (i >> 16) & 255, (i >> 8) & 255, i & 255),
        '[]', 'url', '["nginx"]', '123ms', 'web', '{}', ${at}, ${at}, ${at}
      FROM c`);
    db.exec(`${seq(from, to)}
      INSERT INTO vulnerabilities (workspace, vuln_info, vuln_title, vuln_desc, vuln_poc, severity, confidence, asset_type, asset_value,
        template_id, matcher_name, tags, raw_vuln_json, fingerprint, created_at, updated_at, last_seen_at)
      SELECT ${ws}, printf('tpl-%d', i % 400), printf('Finding %d', i % 400), 'seeded finding', printf('https://h%d.seed.example.com/x', i),
        ${sev}, 'Firm', 'http', printf('h%d.seed.example.com', i), printf('tpl-%d', i % 400), 'm', '["seed"]', '{}', printf('seed-%d', i),
        ${at}, ${at}, ${at}
      FROM c`);
  }).immediate();
}
db.transaction(() => {
  for (const o of saved) db.exec(o.sql);
  const sevs = ['critical', 'high', 'medium', 'low', 'info'];
  db.exec(`INSERT OR REPLACE INTO counters (name, value) VALUES ('assets.total', (SELECT COUNT(*) FROM assets))`);
  db.exec(`INSERT OR REPLACE INTO counters (name, value) VALUES ('vulns.total', (SELECT COUNT(*) FROM vulnerabilities))`);
  for (const sv of sevs) db.exec(`INSERT OR REPLACE INTO counters (name, value) VALUES ('vulns.${sv}', (SELECT COUNT(*) FROM vulnerabilities WHERE severity = '${sv}'))`);
  db.exec(`INSERT INTO workspaces (name, data_source, created_at, updated_at)
    SELECT w, 'local', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
    FROM (SELECT workspace AS w FROM assets UNION SELECT workspace FROM vulnerabilities) WHERE w NOT IN (SELECT name FROM workspaces)`);
  db.exec(`UPDATE workspaces SET
    total_assets = (SELECT COUNT(*) FROM assets a WHERE a.workspace = workspaces.name),
    total_vulns = (SELECT COUNT(*) FROM vulnerabilities v WHERE v.workspace = workspaces.name),
    ${sevs.map((sv) => `vuln_${sv} = (SELECT COUNT(*) FROM vulnerabilities v WHERE v.workspace = workspaces.name AND v.severity = '${sv}')`).join(',\n    ')}`);
}).immediate();
db.pragma('wal_checkpoint(TRUNCATE)');
const counts = Object.fromEntries(db.prepare('SELECT name, value FROM counters').all().map((r) => [r.name, r.value]));
store.close();
process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, counts })}\n`);
