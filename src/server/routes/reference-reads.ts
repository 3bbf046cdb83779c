import { z } from 'zod';
import { defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { assetStats, listStoredVulnDiffs, workspaceNames } from '../../services/reference-reads.js';
import { requireWorkspaceInScope } from '../../auth/scope.js';

/**
 * GET /workspace-names, GET /asset-stats and GET /vulnerabilities/diffs. The last is a static
 * path, so the router prefers it to GET /vulnerabilities/:id whatever the registration order.
 */
export const registerReferenceReadRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workspace-names', summary: 'Names of the workspace rows, ascending (a bare JSON array)', tags: ['workspaces'], sideEffects: 'none',
    responses: { 200: { description: 'string[]', schema: z.array(z.string()) } },
    handler: ({ scope }) => workspaceNames(app, scope),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/asset-stats', summary: 'Distinct technologies, sources, remarks and asset types of the assets', tags: ['assets'], sideEffects: 'none',
    query: z.object({ workspace: z.string().optional() }),
    responses: { 200: { description: '{ data: { technologies, sources, remarks, asset_types } }' } },
    handler: async ({ query, scope }) => {
      await requireWorkspaceInScope(app.repos, scope, query.workspace);
      return { data: await assetStats(app, query.workspace, scope) };
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/vulnerabilities/diffs', summary: 'Stored vulnerability diff snapshots (one per completed run, newest first)', tags: ['vulnerabilities'], sideEffects: 'none',
    query: z.object({ workspace: z.string().optional(), ...paginationShape(20) }),
    handler: async ({ query, scope }) => {
      await requireWorkspaceInScope(app.repos, scope, query.workspace);
      const r = await listStoredVulnDiffs(app, { workspace: query.workspace }, query, scope);
      return listEnvelope(r.data, r.total, query.offset, query.limit);
    },
  });
};
