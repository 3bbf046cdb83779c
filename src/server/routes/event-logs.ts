import { z } from 'zod';
import { boolParam, defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { listEventLogs } from '../../services/run-control.js';
import { parseDiffTime } from '../../services/diffs.js';
import { errors } from '../../errors.js';

const query = z.object({
  topic: z.string().optional(),
  name: z.string().optional(),
  source: z.string().optional(),
  workspace: z.string().optional(),
  run_id: z.string().optional(),
  workflow_name: z.string().optional(),
  processed: boolParam('processed'),
  ...paginationShape(20),
});

/** GET /event-logs: the event log, newest first. */
export const registerEventLogRoutes: RegisterRoutes = (server, deps) => {
  defineRoute(server, deps.app, {
    method: 'GET', url: '/osm/api/event-logs', summary: 'List event log records', tags: ['events'], sideEffects: 'none',
    query,
    handler: async ({ query: q, scope }) => {
      const blank = (v: string | undefined) => (v === '' ? undefined : v);
      const r = await listEventLogs(
        deps.app,
        {
          topic: blank(q.topic), name: blank(q.name), source: blank(q.source), workspace: blank(q.workspace),
          run_id: blank(q.run_id), workflow_name: blank(q.workflow_name), processed: q.processed,
        },
        { offset: q.offset, limit: q.limit },
        scope,
      );
      return listEnvelope(r.data, r.total, q.offset, q.limit);
    },
  });

  // GET /events (shown by the reference): topic, run_id and a created_at window; same envelope.
  const eventsQuery = z.object({
    topic: z.string().optional(),
    run_id: z.string().optional(),
    from: z.string().optional(),
    to: z.string().optional(),
    ...paginationShape(20),
  });
  defineRoute(server, deps.app, {
    method: 'GET', url: '/osm/api/events', summary: 'List events by topic, run and time window', tags: ['events'], sideEffects: 'none',
    query: eventsQuery,
    handler: async ({ query: q, scope }) => {
      const when = (v: string | undefined, which: 'from' | 'to') => {
        if (v === undefined || v.trim() === '') return undefined;
        const t = parseDiffTime(v);
        if (!t) throw errors.invalidTimeFormat(which);
        return t;
      };
      const r = await listEventLogs(
        deps.app,
        { topic: q.topic || undefined, run_id: q.run_id || undefined, from: when(q.from, 'from'), to: when(q.to, 'to') },
        { offset: q.offset, limit: q.limit },
        scope,
      );
      return listEnvelope(r.data, r.total, q.offset, q.limit);
    },
  });
};
