/**
 * Baseline of benchmark 11's PostgreSQL ingest: the same JSONL file read line by line,
 * `JSON.parse`d and mapped to the same columns as the SQLite raw loop (lib/ingest-child.mjs),
 * then sent with a raw `pg` COPY FROM STDIN (text format) into the same migrated table — indexes
 * and counter triggers left on, as osm's import finds them. No merge, no dedup, no events.
 * One COPY per transaction of <batch> rows (default 2,500, osm's transaction size for assets and
 * the fastest of 1,000 / 2,500 / 10,000 measured here for both kinds): the row-level counter triggers update the same counter rows once per
 * inserted row, and PostgreSQL slows down sharply when one transaction updates the same row
 * 100,000 times (every update walks the row's version chain), so one giant COPY would measure
 * that, not the load.
 *   node raw-pg-ingest.mjs raw-assets|raw-vulns <postgres url> <file> <workspace> [batch]
 * Prints one JSON line {mode, ms, rows, maxRssKb}; rows is a real COUNT after the load.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const [mode, url, file, workspace, batchArg] = process.argv.slice(2);
const BATCH = Number(batchArg ?? 2500);
const now = new Date().toISOString();
const esc = (v) =>
  v === null || v === undefined
    ? '\\N'
    : typeof v === 'number'
      ? String(v)
      : String(v).replace(/[\\\b\f\n\r\t\v]/g, (c) => ({ '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' })[c]);

const SPECS = {
  'raw-assets': {
    table: 'assets',
    cols: 'workspace, asset_value, url, input, scheme, method, path, status_code, content_type, content_length, title, words, lines, host_ip, a, tech, time, remarks, source, is_cdn, raw_json_data, created_at, updated_at, last_seen_at',
    row: (r) => [
      workspace, r.host, r.url, r.input, r.scheme, r.method, r.path, r.status_code, r.content_type, r.content_length, r.title, r.words, r.lines,
      r.host_ip, JSON.stringify(r.a ?? []), JSON.stringify(r.tech ?? []), r.time, r.webserver ?? '', 'web', r.cdn ? 1 : 0, JSON.stringify(r), now, now, now,
    ],
  },
  'raw-vulns': {
    table: 'vulnerabilities',
    cols: 'workspace, vuln_info, template_id, vuln_title, vuln_desc, vuln_poc, severity, confidence, asset_type, asset_value, matcher_name, tags, detail_http_request, detail_http_response, raw_vuln_json, fingerprint, created_at, updated_at, last_seen_at',
    row: (r) => [
      workspace, r['template-id'], r['template-id'], r.info.name, r.info.description, r['matched-at'], r.info.severity, 'Firm', r.type, r.host,
      r['matcher-name'], JSON.stringify(r.info.tags), r.request, r.response, JSON.stringify(r),
      `${workspace}\u0001${r['template-id']}\u0001${r.host}\u0001${r['matcher-name']}`, now, now, now,
    ],
  },
};
const spec = SPECS[mode];
if (!spec) throw new Error(`unknown mode ${mode}`);

const client = new pg.Client({ connectionString: url });
await client.connect();
const t0 = performance.now();
const rl = createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
/** One transaction: BEGIN, COPY of `lines`, COMMIT. */
async function copyBatch(lines) {
  await client.query('BEGIN');
  await pipeline(
    Readable.from(
      (function* () {
        let buf = '';
        for (const line of lines) {
          buf += `${spec.row(JSON.parse(line)).map(esc).join('\t')}\n`;
          if (buf.length >= 262_144) {
            yield buf;
            buf = '';
          }
        }
        if (buf) yield buf;
      })(),
    ),
    client.query(copyFrom(`COPY ${spec.table} (${spec.cols}) FROM STDIN`)),
  );
  await client.query('COMMIT');
}
let lines = [];
for await (const line of rl) {
  if (line === '') continue;
  lines.push(line);
  if (lines.length >= BATCH) {
    await copyBatch(lines);
    lines = [];
  }
}
if (lines.length) await copyBatch(lines);
const ms = performance.now() - t0;
const rows = Number((await client.query(`SELECT COUNT(*) AS n FROM ${spec.table} WHERE workspace = $1`, [workspace])).rows[0].n);
await client.end();
process.stdout.write(`${JSON.stringify({ mode, ms, rows, maxRssKb: process.resourceUsage().maxRSS })}\n`);
