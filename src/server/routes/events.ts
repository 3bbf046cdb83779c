import { z } from 'zod';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { emitEvent, emitShape, receiverStatus, receiverWorkflows } from '../../services/events.js';

/** The event receiver: POST /events/emit, GET /event-receiver/status and /event-receiver/workflows. */
export const registerEventRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/events/emit', summary: 'Record an event; matching event triggers launch their workflows', tags: ['events'], sideEffects: 'executes',
    body: emitShape,
    responses: {
      200: { description: 'Recorded', schema: z.object({ success: z.boolean(), message: z.string(), event_id: z.string(), receiver_running: z.boolean() }) },
      400: { description: 'Topic is required' },
    },
    handler: ({ body }) => emitEvent(app, body),
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/event-receiver/status', summary: 'Scheduler / event receiver status', tags: ['events'], sideEffects: 'none',
    responses: {
      200: {
        description: 'Status; a master (`serve --master`) adds scheduler_leader: only the master holding the Redis scheduler lock runs its scheduler',
        schema: z.object({
          enabled: z.boolean(), running: z.boolean(), workflow_count: z.number(), trigger_count: z.number(),
          scheduler_leader: z.object({ role: z.enum(['leader', 'standby']), lock_key: z.string(), holder: z.string().nullable() }).optional(),
        }),
      },
    },
    handler: () => receiverStatus(app),
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/event-receiver/workflows', summary: 'Workflows with registered triggers, and the triggers', tags: ['events'], sideEffects: 'none',
    handler: () => receiverWorkflows(app),
  });
};
