/**
 * Baseline of benchmark 11's PostgreSQL reads: bench/lib/bare-server.mjs on PostgreSQL — a bare
 * fastify server (no auth, no validation, no hooks, no total) answering the same reads from the
 * same database with the same indexed queries, through a `pg` pool of 4 connections.
 * Prints `{"port":N}` once listening. Usage: node bare-pg-server.mjs <postgres url>
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.argv[2], max: 4 });
const all = async (text, values) => (await pool.query({ text, values })).rows;
const app = Fastify({ logger: false });
const page = (q) => [Number(q.limit ?? 20), Number(q.offset ?? 0)];
app.get('/vulnerabilities', async (req) => {
  const q = req.query;
  const [limit, offset] = page(q);
  const data = await all('SELECT * FROM vulnerabilities WHERE workspace = $1 AND severity = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4', [q.workspace, q.severity, limit, offset]);
  return { data, pagination: { offset, limit } };
});
app.get('/assets', async (req) => {
  const q = req.query;
  const [limit, offset] = page(q);
  const rows = await all('SELECT * FROM assets WHERE workspace = $1 AND status_code = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4', [q.workspace, Number(q.status_code), limit, offset]);
  return { data: rows.map(({ raw_json_data: _r, ...rest }) => rest), pagination: { offset, limit } };
});
app.get('/stats', async () => ({ counters: await all('SELECT name, value FROM counters'), runs: await all('SELECT status, COUNT(*) AS n FROM runs GROUP BY status') }));
app.get('/vulnerabilities/summary', async (req) => ({
  data: (await all('SELECT vuln_critical, vuln_high, vuln_medium, vuln_low, vuln_info, total_vulns FROM workspaces WHERE name = $1', [req.query.workspace]))[0] ?? {},
}));

await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => pool.end()).then(() => {
    process.exitCode = 0;
  });
});
