import { z } from 'zod';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { lintInstalledWorkflow } from '../../services/workflow-lint.js';

/** GET /workflows/{name}/lint: the lint report of an installed workflow (the dashboard shows it at its lines). */
export const registerWorkflowLintRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workflows/:name/lint', summary: 'Lint an installed workflow: errors and warnings with their lines', tags: ['workflows'], sideEffects: 'none',
    params: z.object({ name: z.string() }),
    responses: { 200: { description: '{ data: { name, kind, valid, errors, warnings, issues: [{ severity, message, path, rule, line, file }] } }' }, 404: { description: 'Workflow not found' } },
    handler: ({ params }) => ({ data: lintInstalledWorkflow(app, params.name) }),
  });
};
