/**
 * Webhook-triggered runs (reference server-api §1.4):
 *
 * - `POST /osm/api/webhook-runs/{uuid}/trigger` — public (the template's own key in `?key=`,
 *   checked against its stored hash),
 *   answered only while `server.enable_trigger_via_webhook` is true. The setting is read on every
 *   request, so a settings hot reload switches it without a restart; while it is off the route
 *   answers exactly like an unknown route (404 `Route … not found`). The optional body
 *   `{target, flow, module}` is read leniently (any content type, parse errors ignored, as the
 *   reference) but is capped at TRIGGER_BODY_LIMIT bytes: the route is public.
 * - `GET` on the same path triggers too, without overrides (the reference accepts both). It is
 *   the only GET route with a side effect (docs/security.md): a link preview of a trigger URL
 *   that carries its key starts a run, exactly as in the reference.
 * - `GET /osm/api/webhook-runs/list` and `DELETE /osm/api/webhook-runs/{uuid}` — authenticated.
 */
import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { errors, type OsmError } from '../../errors.js';
import { defineRoute, paginationShape, MAX_LIMIT } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { deleteWebhookRun, listWebhookRuns, overridesOf, triggerWebhookRun, webhookTriggersEnabled } from '../../services/webhook-runs.js';

export const TRIGGER_URL = '/osm/api/webhook-runs/:uuid/trigger';
/** Largest trigger body read (it only carries three short strings). */
export const TRIGGER_BODY_LIMIT = 64 * 1024;
/** Private media type: trigger bodies are re-labelled with it so only the lenient parser reads them. */
const LENIENT_TYPE = 'application/x-osm-webhook-trigger';

const uuidParams = z.object({ uuid: z.string().min(1).max(200) });
const triggerQuery = z.object({ key: z.union([z.string(), z.array(z.string())]).optional() });

/** The answer of a route that is switched off: the same as for a route that does not exist. */
function routeOff(req: FastifyRequest): OsmError {
  return errors.notFound(`Route ${req.method} ${req.url.split('?')[0]} not found`);
}

/** Reads a trigger body: at most TRIGGER_BODY_LIMIT bytes; JSON objects are kept, anything else is ignored. */
function readLenient(payload: Readable, declaredLength: string | undefined, done: (err: Error | null, body?: unknown) => void): void {
  if (declaredLength !== undefined && Number(declaredLength) > TRIGGER_BODY_LIMIT) {
    done(errors.payloadTooLarge(TRIGGER_BODY_LIMIT));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > TRIGGER_BODY_LIMIT) {
      cleanup();
      done(errors.payloadTooLarge(TRIGGER_BODY_LIMIT));
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    cleanup();
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined; // the reference ignores parse errors: the template's values apply
    }
    done(null, body);
  };
  const onError = (err: Error) => {
    cleanup();
    done(err);
  };
  const cleanup = () => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
}

export const registerWebhookRunRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  server.addContentTypeParser(LENIENT_TYPE, (req, payload, done) => readLenient(payload, req.headers['content-length'], done));
  // Before any body is read: a disabled trigger is an unknown route, and a trigger body of any
  // content type (or none declared) goes to the lenient parser above.
  server.addHook('preParsing', async (req, _reply, payload) => {
    if (req.routeOptions.url !== TRIGGER_URL) return payload;
    if (!webhookTriggersEnabled(app)) throw routeOff(req);
    if (req.method === 'POST' && (req.headers['content-type'] !== undefined || req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0')) {
      req.headers['content-type'] = LENIENT_TYPE;
    }
    return payload;
  });

  defineRoute(server, app, {
    method: 'POST', url: TRIGGER_URL, summary: 'Trigger a webhook run template (public: its own key; needs server.enable_trigger_via_webhook)', tags: ['webhook-runs'], sideEffects: 'executes',
    params: uuidParams,
    query: triggerQuery,
    bodyKind: 'none',
    responses: {
      202: { description: '{ message: "Run triggered successfully", run_uuid, run_id, target, workflow } — the run is queued (priority high) and executed by the run queue' },
      400: { description: 'Invalid target override, invalid workflow name, or kind mismatch' },
      401: { description: 'Invalid or missing authentication key' },
      404: { description: "Webhook not found; Workflow '<name>' not found; Route … not found while triggers are disabled" },
      413: { description: `Body larger than ${TRIGGER_BODY_LIMIT} bytes` },
    },
    handler: async ({ req, reply, params, query }) => {
      if (!webhookTriggersEnabled(app)) throw routeOff(req);
      const { answer } = await triggerWebhookRun(app, params.uuid, query.key, overridesOf(req.body), () => deps.queue?.kick());
      reply.status(202);
      return answer;
    },
  });

  defineRoute(server, app, {
    // The reference triggers on GET as well (clients that can only send GETs rely on it). This is
    // the one GET route with a side effect: it is off unless enabled and needs the template's key.
    method: 'GET', url: TRIGGER_URL, summary: 'Trigger a webhook run template without overrides (as POST; public: its own key)', tags: ['webhook-runs'], sideEffects: 'executes',
    params: uuidParams,
    query: triggerQuery,
    responses: {
      202: { description: '{ message: "Run triggered successfully", run_uuid, run_id, target, workflow }' },
      401: { description: 'Invalid or missing authentication key' },
      404: { description: "Webhook not found; Workflow '<name>' not found; Route … not found while triggers are disabled" },
    },
    handler: async ({ req, reply, params, query }) => {
      if (!webhookTriggersEnabled(app)) throw routeOff(req);
      const { answer } = await triggerWebhookRun(app, params.uuid, query.key, overridesOf(undefined), () => deps.queue?.kick());
      reply.status(202);
      return answer;
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/webhook-runs/list', summary: 'Webhook run templates, newest first (keys redacted)', tags: ['webhook-runs'], sideEffects: 'none',
    query: z.object(paginationShape(MAX_LIMIT)),
    responses: { 200: { description: '{ data: [template + webhook_url], total }' } },
    handler: ({ query }) => listWebhookRuns(app, query),
  });

  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/webhook-runs/:uuid', summary: 'Delete a webhook run template (runs it started are kept)', tags: ['webhook-runs'], sideEffects: 'writes',
    params: uuidParams,
    responses: { 200: { description: '{ message: "Webhook deleted", webhook_uuid }' }, 404: { description: 'Webhook not found' } },
    handler: ({ params }) => deleteWebhookRun(app, params.uuid),
  });
};
