/**
 * One import, in a process of its own so its peak RSS is its own. Prints one JSON line.
 *   node ingest-child.mjs osm-assets|osm-vulns|raw-assets|raw-vulns <db> <file> <workspace>
 * osm-*: the real importers (`importAssetsJsonl` / `importVulnsJsonl` from dist/ingest).
 * raw-*: the baseline — read lines, JSON.parse, one prepared INSERT per line into the same
 * migrated table (same indexes, triggers and pragmas), 10,000 rows per transaction.
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { DIST } from './common.mjs';

const [mode, dbPath, file, workspace] = process.argv.slice(2);
const { openStore } = await import(pathToFileURL(path.join(DIST, 'store', 'index.js')).href);
const ingest = await import(pathToFileURL(path.join(DIST, 'ingest', 'index.js')).href);

const BATCH = 10_000;

/** The baseline loop: prepared inserts, BATCH rows per transaction. */
async function rawImport(store, insert, toParams) {
  const db = store.db;
  let rows = [];
  let total = 0;
  const flush = db.transaction((batch) => {
    for (const p of batch) insert.run(p);
  });
  const rl = createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line === '') continue;
    rows.push(toParams(JSON.parse(line)));
    if (rows.length >= BATCH) {
      flush.immediate(rows);
      total += rows.length;
      rows = [];
    }
  }
  if (rows.length) flush.immediate(rows);
  return total + rows.length;
}

const store = openStore(dbPath);
const now = new Date().toISOString();
const t0 = performance.now();
let result;
if (mode === 'osm-assets') {
  result = await ingest.importAssetsJsonl(store, workspace, file);
} else if (mode === 'osm-vulns') {
  result = await ingest.importVulnsJsonl(store, workspace, file);
} else if (mode === 'raw-assets') {
  const insert = store.db.prepare(`INSERT INTO assets (workspace, asset_value, url, input, scheme, method, path, status_code, content_type,
      content_length, title, words, lines, host_ip, a, tech, time, remarks, source, is_cdn, raw_json_data, created_at, updated_at, last_seen_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'web', ?, ?, ?, ?, ?)`);
  const n = await rawImport(store, insert, (r) => [
    workspace, r.host, r.url, r.input, r.scheme, r.method, r.path, r.status_code, r.content_type, r.content_length, r.title, r.words, r.lines,
    r.host_ip, JSON.stringify(r.a ?? []), JSON.stringify(r.tech ?? []), r.time, r.webserver ?? '', r.cdn ? 1 : 0, JSON.stringify(r), now, now, now,
  ]);
  result = { new: n };
} else if (mode === 'raw-vulns') {
  const insert = store.db.prepare(`INSERT INTO vulnerabilities (workspace, vuln_info, template_id, vuln_title, vuln_desc, vuln_poc, severity,
      confidence, asset_type, asset_value, matcher_name, tags, detail_http_request, detail_http_response, raw_vuln_json, fingerprint,
      created_at, updated_at, last_seen_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, 'Firm', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const n = await rawImport(store, insert, (r) => [
    workspace, r['template-id'], r['template-id'], r.info.name, r.info.description, r['matched-at'], r.info.severity, r.type, r.host,
    r['matcher-name'], JSON.stringify(r.info.tags), r.request, r.response, JSON.stringify(r),
    `${workspace}\0${r['template-id']}\0${r.host}\0${r['matcher-name']}`, now, now, now,
  ]);
  result = { new: n };
} else {
  throw new Error(`unknown mode ${mode}`);
}
const ms = performance.now() - t0;
const table = mode.endsWith('assets') ? 'assets' : 'vulnerabilities';
// Counted for real (outside the timing) so the benchmark checks what was stored, not what was claimed.
const rows = store.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE workspace = ?`).get(workspace).n;
store.close();
process.stdout.write(
  `${JSON.stringify({ mode, ms, rows, stats: { ...result, error_lines: undefined }, maxRssKb: process.resourceUsage().maxRSS })}\n`,
);
