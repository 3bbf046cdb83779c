import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppContext } from '../../services/context.js';
import { errors } from '../../errors.js';
import { masterOf } from '../../distributed/attach.js';

/**
 * Prometheus metrics at `/metrics`: request counts and durations per route pattern, runs by
 * status and queue depth (read from the store's indexed status counts at scrape time). The route
 * needs credentials unless `server.metrics_public` is true, and answers 404 when
 * `server.enable_metrics` is false.
 */
export function registerMetrics(server: FastifyInstance, app: AppContext): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'osm_' });
  const requests = new Counter({ name: 'osm_http_requests_total', help: 'HTTP requests', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'osm_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'osm_runs',
    help: 'Runs by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await app.repos.runs.countByStatus();
      for (const s of ['pending', 'queued', 'running', 'completed', 'failed', 'cancelled']) this.set({ status: s }, counts[s] ?? 0);
    },
  });
  new Gauge({
    name: 'osm_queue_depth',
    help: 'Runs waiting in the queue',
    registers: [registry],
    async collect() {
      this.set((await app.repos.runs.countByStatus()).queued ?? 0);
    },
  });
  // Distributed mode (a master): queue depth by BullMQ state, workers busy/idle/offline, attempts by cause and outcome.
  new Gauge({
    name: 'osm_distributed_queue_jobs',
    help: 'Tasks in the distributed queue by BullMQ state (master only)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      const master = masterOf(app);
      if (!master) return;
      try {
        for (const [state, n] of Object.entries(await master.views.jobCounts())) this.set({ state }, n);
      } catch {
        // Redis away: no sample rather than a failed scrape
      }
    },
  });
  new Gauge({
    name: 'osm_distributed_worker_busy',
    help: 'Per worker: 1 busy, 0 idle; offline workers are absent (master only)',
    labelNames: ['worker'],
    registers: [registry],
    async collect() {
      this.reset();
      const master = masterOf(app);
      if (!master) return;
      try {
        for (const w of await master.views.listWorkers()) if (w.status !== 'offline') this.set({ worker: w.id }, w.status === 'busy' ? 1 : 0);
      } catch {
        // Redis away
      }
    },
  });
  new Gauge({
    name: 'osm_distributed_attempts',
    help: 'Attempts of distributed runs recorded by the master, by cause (first, stalled, worker lost, retry, handed back)',
    labelNames: ['cause'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [cause, n] of Object.entries(await app.repos.attempts.countByCause())) this.set({ cause }, n);
    },
  });
  new Gauge({
    name: 'osm_distributed_worker_attempts',
    help: 'Attempts per worker and outcome, from the master database (survive restarts)',
    labelNames: ['worker', 'outcome'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [worker, byOutcome] of Object.entries(await app.repos.attempts.totalsByWorker())) {
        for (const [outcome, n] of Object.entries(byOutcome)) this.set({ worker, outcome }, n);
      }
    },
  });
  server.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions?.url ?? 'unmatched';
    requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    duration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });
  const metricsSettings = () => app.settings().settings.server as { enable_metrics?: boolean; metrics_public?: boolean };
  // Credentials like any route unless `server.metrics_public`; 404 when `server.enable_metrics` is off (both read live).
  server.get('/metrics', { config: { publicWhen: () => metricsSettings().metrics_public === true && metricsSettings().enable_metrics !== false } }, async (_req, reply) => {
    if (metricsSettings().enable_metrics === false) throw errors.metricsDisabled();
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return registry;
}
