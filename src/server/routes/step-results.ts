import { z } from 'zod';
import { STEP_STATUSES, type StepStatus } from '../../store/index.js';
import { defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { listStepResults } from '../../services/run-control.js';

const query = z.object({
  workspace: z.string().optional(),
  status: z.enum(STEP_STATUSES as [StepStatus, ...StepStatus[]]).optional(),
  step_type: z.string().optional(),
  run_id: z.string().optional(),
  /** The reference web UI filters by run_uuid. */
  run_uuid: z.string().optional(),
  ...paginationShape(20),
});

/** GET /step-results: step results across runs, newest first. */
export const registerStepResultRoutes: RegisterRoutes = (server, deps) => {
  defineRoute(server, deps.app, {
    method: 'GET', url: '/osm/api/step-results', summary: 'List step results (filters: workspace, status, step_type, run_id or run_uuid)', tags: ['runs'], sideEffects: 'none',
    query,
    handler: async ({ query: q, scope }) => {
      const r = await listStepResults(
        deps.app,
        { workspace: q.workspace || undefined, status: q.status, step_type: q.step_type || undefined, run_id: q.run_id || q.run_uuid || undefined },
        { offset: q.offset, limit: q.limit },
        scope,
      );
      return listEnvelope(r.data, r.total, q.offset, q.limit);
    },
  });
};
