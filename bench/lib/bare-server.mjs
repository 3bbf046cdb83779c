/**
 * Baseline of the API-reads benchmark: a bare fastify server (no auth, no validation, no hooks)
 * answering the same reads straight from the same database file with the same indexed queries —
 * the page query only for lists (the least any implementation must do), the counter rows for
 * /stats and the summary. Prints `{"port":N}` once listening. Usage: node bare-server.mjs <db>
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const db = new Database(process.argv[2], { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const vulnPage = db.prepare(
  'SELECT * FROM vulnerabilities WHERE workspace = ? AND severity = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?',
);
const assetPage = db.prepare('SELECT * FROM assets WHERE workspace = ? AND status_code = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?');
const counters = db.prepare('SELECT name, value FROM counters');
const runs = db.prepare('SELECT status, COUNT(*) AS n FROM runs GROUP BY status');
const summary = db.prepare('SELECT vuln_critical, vuln_high, vuln_medium, vuln_low, vuln_info, total_vulns FROM workspaces WHERE name = ?');

const app = Fastify({ logger: false });
const page = (q) => [Number(q.limit ?? 20), Number(q.offset ?? 0)];
app.get('/vulnerabilities', async (req) => {
  const q = req.query;
  const [limit, offset] = page(q);
  return { data: vulnPage.all(q.workspace, q.severity, limit, offset), pagination: { offset, limit } };
});
app.get('/assets', async (req) => {
  const q = req.query;
  const [limit, offset] = page(q);
  const data = assetPage.all(q.workspace, Number(q.status_code), limit, offset).map(({ raw_json_data: _r, ...rest }) => rest);
  return { data, pagination: { offset, limit } };
});
app.get('/stats', async () => ({ counters: counters.all(), runs: runs.all() }));
app.get('/vulnerabilities/summary', async (req) => ({ data: summary.get(req.query.workspace) ?? {} }));

await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => {
    db.close();
    process.exitCode = 0;
  });
});
