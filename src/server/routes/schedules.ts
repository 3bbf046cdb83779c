import { z } from 'zod';
import { defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  scheduleFieldsShape,
  setScheduleEnabled,
  triggerSchedule,
  updateSchedule,
} from '../../services/schedules.js';

const idParams = z.object({ id: z.string().min(1) });

/** /schedules: CRUD, enable/disable and trigger-now; every change reaches the live scheduler. */
export const registerScheduleRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/schedules', summary: 'List schedules, newest first', tags: ['schedules'], sideEffects: 'none',
    query: z.object(paginationShape(20)),
    handler: async ({ query, scope }) => {
      const res = await listSchedules(app, query, scope);
      return listEnvelope(res.data, res.total, query.offset, query.limit);
    },
  });
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/schedules', summary: 'Create a cron, event, watch or manual schedule', tags: ['schedules'], sideEffects: 'writes',
    body: scheduleFieldsShape,
    responses: {
      201: { description: '{ message, data: { id, name, workflow_name, schedule, is_enabled } }' },
      400: { description: 'Invalid body, cron expression, target, params or watch path' },
      404: { description: 'Workflow not found' },
    },
    handler: async ({ body, reply, scope }) => {
      const row = await createSchedule(app, body, scope);
      reply.status(201);
      return { message: 'Schedule created', data: { id: row.id, name: row.name, workflow_name: row.workflow_name, schedule: row.schedule, is_enabled: row.is_enabled } };
    },
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/schedules/:id', summary: 'One schedule (not wrapped)', tags: ['schedules'], sideEffects: 'none',
    params: idParams,
    responses: { 200: { description: 'Schedule' }, 404: { description: 'Schedule not found' } },
    handler: ({ params, scope }) => getSchedule(app, params.id, scope),
  });
  defineRoute(server, app, {
    method: 'PUT', url: '/osm/api/schedules/:id', summary: 'Change a schedule (partial body)', tags: ['schedules'], sideEffects: 'writes',
    params: idParams,
    body: scheduleFieldsShape,
    handler: async ({ params, body, scope }) => {
      const row = await updateSchedule(app, params.id, body, scope);
      return { message: 'Schedule updated', data: { id: row.id, name: row.name, schedule: row.schedule } };
    },
  });
  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/schedules/:id', summary: 'Delete a schedule', tags: ['schedules'], sideEffects: 'writes',
    params: idParams,
    handler: async ({ params, scope }) => {
      await deleteSchedule(app, params.id, scope);
      return { message: 'Schedule deleted' };
    },
  });
  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    defineRoute(server, app, {
      method: 'POST', url: `/osm/api/schedules/:id/${action}`, summary: `${enabled ? 'Enable' : 'Disable'} a schedule`, tags: ['schedules'], sideEffects: 'writes',
      params: idParams,
      handler: async ({ params, scope }) => {
        await setScheduleEnabled(app, params.id, enabled, scope);
        return { message: enabled ? 'Schedule enabled' : 'Schedule disabled' };
      },
    });
  }
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/schedules/:id/trigger', summary: 'Run the schedule now (creates a queued run)', tags: ['schedules'], sideEffects: 'executes',
    params: idParams,
    responses: { 202: { description: '{ message, schedule, workflow, run_uuid }' }, 404: { description: 'Schedule not found' } },
    handler: async ({ params, reply, scope }) => {
      const { schedule, run } = await triggerSchedule(app, params.id, deps.queue, scope);
      reply.status(202);
      return { message: 'Schedule triggered', schedule: schedule.name, workflow: schedule.workflow_name, run_uuid: run.run_uuid };
    },
  });
};
