/**
 * Distributed mode, master side: `/workers`, `/tasks`, and cancel propagation to the queue
 * (`run_mode: distributed` on `POST /runs` is handled by the runs route).
 * Every route needs a daemon started with `--master`; otherwise 400 `Distributed mode requires
 * the server to be started with --master flag`. GET routes only read the queue and Redis.
 */
import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RegisterRoutes } from '../app.js';
import { defineRoute, intParam } from '../route.js';
import { masterOf } from '../../distributed/attach.js';
import { requireMaster, submitTask } from '../../distributed/service.js';
import type { AppContext } from '../../services/context.js';

const idParams = z.object({ id: z.string().min(1).max(128) });

const taskBody = z.object({
  workflow: z.string().optional(),
  workflow_name: z.string().optional(),
  workflow_kind: z.enum(['flow', 'module']).optional(),
  target: z.string().optional(),
  params: z.record(z.string(), z.string()).optional(),
  priority: z.string().optional(),
  /** Only a worker with these labels takes the task. */
  labels: z.array(z.string()).max(16).optional(),
});

function isCancelRequest(req: FastifyRequest): boolean {
  const url = req.routeOptions.url;
  return (req.method === 'DELETE' && url === '/osm/api/runs/:id') || (req.method === 'POST' && url === '/osm/api/runs/:id/cancel');
}

/** After a successful cancel of a distributed run, its task is removed or flagged for its worker. */
function cancelPropagationHook(app: AppContext) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (reply.statusCode !== 200 || !isCancelRequest(req)) return;
    const master = masterOf(app);
    const id = (req.params as { id?: string } | undefined)?.id;
    if (!master || !id) return;
    // The master's sweep retries if this fails (e.g. Redis briefly away).
    await master.propagateCancel(id).catch((err: unknown) => req.log.warn({ err }, 'cannot propagate cancel to the distributed queue'));
  };
}

/** Workers and tasks of the distributed master. */
export const registerDistributedRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  server.addHook('onResponse', cancelPropagationHook(app));

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workers', summary: 'Workers known to the distributed master (idle, busy or offline)', tags: ['distributed'], sideEffects: 'none',
    responses: { 200: { description: '{ data: [worker], count }' }, 400: { description: 'Server not started with --master' } },
    handler: async () => {
      const data = await requireMaster(app).views.listWorkers();
      return { data, count: data.length };
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workers/:id', summary: 'One worker', tags: ['distributed'], sideEffects: 'none',
    params: idParams,
    responses: { 200: { description: 'The worker' }, 404: { description: 'Worker not found' } },
    handler: ({ params }) => requireMaster(app).views.getWorker(params.id),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/workers/:id/drain', summary: 'Drain a worker: it finishes its tasks in hand and takes no new ones', tags: ['distributed'], sideEffects: 'writes',
    params: idParams,
    responses: { 200: { description: 'The worker (draining within a second)' }, 404: { description: 'Worker not found' } },
    handler: async ({ params }) => ({ message: 'Worker draining', worker: await requireMaster(app).views.drainWorker(params.id) }),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/tasks', summary: 'Tasks in the distributed queue: running, waiting, recently completed and failed', tags: ['distributed'], sideEffects: 'none',
    query: z.object({ limit: intParam('limit', { min: 1, cap: 100, default: 50 }).transform((v) => v ?? 50) }),
    responses: { 200: { description: '{ running, waiting, completed, failed } (each at most `limit`, default 50, max 100)' } },
    handler: ({ query }) => requireMaster(app).views.listTasks(query.limit),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/tasks/:id', summary: 'One task (its id is the run_uuid)', tags: ['distributed'], sideEffects: 'none',
    params: idParams,
    responses: { 200: { description: 'The task with its run' }, 404: { description: 'task not found: <id>' } },
    handler: ({ params }) => requireMaster(app).views.getTask(params.id),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/tasks', summary: 'Submit one workflow run to the distributed workers', tags: ['distributed'], sideEffects: 'executes',
    body: taskBody,
    responses: { 202: { description: 'Task submitted' }, 400: { description: 'Invalid request' }, 404: { description: 'Workflow not found' } },
    handler: async ({ body, reply }) => {
      const res = await submitTask(app, body);
      reply.status(202);
      return res;
    },
  });
};
