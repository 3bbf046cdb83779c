import Fastify, { LogController, type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import type { AppContext } from '../services/context.js';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH, registerErrorHandling } from './plugins/errors.js';
import { registerAuth } from './plugins/auth.js';
import { registerMetrics } from './plugins/metrics.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerCors } from './plugins/cors.js';
import { registerLoginThrottle, type LoginThrottle } from './plugins/login-throttle.js';
import { registerCsrf } from './plugins/csrf.js';
import { registerCompression } from './plugins/compression.js';
import { registerUi } from './plugins/ui.js';
import { ROUTE_MODULES } from './routes/index.js';
import { isAudited, recordRequest } from '../services/audit.js';
import type { RunQueue } from '../engine/queue.js';
import { registerStreamShutdown } from './sse.js';

export interface ServerOptions {
  noAuth?: boolean;
  /** pino logger options, or false for none (tests). */
  logger?: boolean | Record<string, unknown>;
  /** The run scheduler; absent in route tests that do not execute runs. */
  queue?: RunQueue;
  /** The built dashboard folder (default dist/web; tests use a fixture). */
  uiDir?: string;
}

/** What route modules receive. */
export interface ServerDeps {
  app: AppContext;
  noAuth: boolean;
  queue?: RunQueue;
  startedAt: number;
  loginThrottle: LoginThrottle;
}

/** Every route of a built server as registered (`HEAD` routes fastify adds for GET included). */
export const registeredRoutes = new WeakMap<FastifyInstance, { method: string; url: string }[]>();

export type RegisterRoutes = (server: FastifyInstance, deps: ServerDeps) => void;

/**
 * Builds the fastify server: limits, parsers, CORS, auth, errors, metrics, OpenAPI and every route
 * module. Nothing listens until the caller calls `listen`.
 */
export async function buildServer(app: AppContext, opts: ServerOptions = {}): Promise<FastifyInstance> {
  const cfg = app.settings().settings.server as { max_body_mb?: number; max_upload_mb?: number };
  const bodyLimit = Math.max(1, Number(cfg.max_body_mb ?? 4)) * 1024 * 1024;
  const uploadLimit = Math.max(1, Number(cfg.max_upload_mb ?? 512)) * 1024 * 1024;
  const server = Fastify({
    logger: opts.logger === undefined ? false : opts.logger,
    // One line per request is logged by our onResponse hook instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    trustProxy: false,
    return503OnClosing: true,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
  });

  // Every route registered (plugins' and plain ones too), for the access-table coverage test.
  const registered: { method: string; url: string }[] = [];
  registeredRoutes.set(server, registered);
  server.addHook('onRoute', (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) registered.push({ method: m, url: r.url ?? r.path });
  });

  // Raw YAML bodies (PUT /settings/yaml) and plain text are read as strings.
  server.addContentTypeParser(['text/yaml', 'application/yaml', 'application/x-yaml', 'text/plain'], { parseAs: 'string', bodyLimit }, (_req, body, done) => done(null, body));
  await server.register(multipart, { limits: { fileSize: uploadLimit, files: 1, fields: 20, parts: 25, fieldSize: 1024 * 1024 } });

  registerErrorHandling(server, { bodyLimit });
  // CORS first: preflights of allowed origins are answered before authentication.
  await registerCors(server, app);
  registerAuth(server, app, { noAuth: Boolean(opts.noAuth) });
  registerCsrf(server, { noAuth: Boolean(opts.noAuth) });
  await registerCompression(server);
  const loginThrottle = await registerLoginThrottle(server);
  registerMetrics(server, app);

  // The audit log: every state-changing request, with the error message of a failed one.
  server.addHook('onError', async (req, _reply, err) => {
    (req as { auditError?: string }).auditError = err.message;
  });
  // Written before the answer leaves (onSend, not onResponse): a client that gets its answer can
  // read the request in the log at once (an onResponse write raced the client's next request).
  server.addHook('onSend', async (req, reply, payload) => {
    if (isAudited(req)) await recordRequest(app, req, reply, (req as { auditError?: string }).auditError);
    return payload;
  });

  // One log line per request (no secrets: headers are not logged).
  server.addHook('onResponse', async (req, reply) => {
    req.log.info({ method: req.method, url: req.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  // Long-lived streams (logs, events) end before the server closes.
  registerStreamShutdown(server);
  const deps: ServerDeps = { app, noAuth: Boolean(opts.noAuth), queue: opts.queue, startedAt: Date.now(), loginThrottle };
  for (const register of ROUTE_MODULES) register(server, deps);
  registerOpenApi(server);
  await registerUi(server, app, { builtDir: opts.uiDir });
  return server;
}
