/**
 * Baseline of benchmark 9: the assets of a SQLite base sent to PostgreSQL with nothing but a raw
 * `pg` COPY FROM STDIN (text format, triggers disabled as osm does), no checksums, no
 * verification. Usage: node raw-pg-copy.mjs <sqlite db> <postgres url>; prints {ms, rows}.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const [dbPath, url] = process.argv.slice(2);
const db = new Database(dbPath, { readonly: true });
const cols = db.prepare(`SELECT name FROM pragma_table_info('assets') ORDER BY cid`).all().map((c) => c.name);
const client = new pg.Client({ connectionString: url });
await client.connect();
const esc = (v) => (v === null ? '\\N' : typeof v === 'number' ? String(v) : String(v).replace(/[\\\b\f\n\r\t\v]/g, (c) => ({ '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' })[c]));
const t0 = performance.now();
await client.query('BEGIN');
await client.query('TRUNCATE assets CASCADE');
await client.query('ALTER TABLE assets DISABLE TRIGGER USER');
let rows = 0;
const iter = db.prepare(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM assets`).raw(true).iterate();
await pipeline(
  Readable.from((function* () {
    let buf = '';
    for (const r of iter) {
      rows++;
      buf += `${r.map(esc).join('\t')}\n`;
      if (buf.length >= 262_144) {
        yield buf;
        buf = '';
      }
    }
    if (buf) yield buf;
  })()),
  client.query(copyFrom(`COPY assets (${cols.map((c) => `"${c}"`).join(', ')}) FROM STDIN`)),
);
await client.query('ALTER TABLE assets ENABLE TRIGGER USER');
await client.query('COMMIT');
const ms = performance.now() - t0;
await client.end();
db.close();
process.stdout.write(`${JSON.stringify({ ms, rows })}\n`);
