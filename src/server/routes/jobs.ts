import { z } from 'zod';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { jobProgress } from '../../services/run-control.js';

/** GET /jobs/{job_id}: progress of the runs created by one POST /runs. */
export const registerJobRoutes: RegisterRoutes = (server, deps) => {
  defineRoute(server, deps.app, {
    method: 'GET', url: '/osm/api/jobs/:job_id', summary: 'Progress of a job (the runs of one request)', tags: ['runs'], sideEffects: 'none',
    params: z.object({ job_id: z.string().min(1).max(200) }),
    responses: { 200: { description: 'Job progress' }, 404: { description: 'Job not found' } },
    handler: ({ params, scope }) => jobProgress(deps.app, params.job_id, scope),
  });
};
