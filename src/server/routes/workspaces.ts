import { z } from 'zod';
import { boolParam, defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { deleteWorkspace, getWorkspace, listWorkspaces, readStateFile } from '../../services/workspaces.js';
import { orgFilterFor } from '../../auth/scope.js';

const listQuery = z.object({
  ...paginationShape(20),
  search: z.string().optional(),
  data_source: z.string().optional(),
  filesystem: boolParam('filesystem'),
  org: z.string().optional(),
});
const nameParams = z.object({ name: z.string() });

/** GET /workspaces, GET/DELETE /workspaces/{name}, GET /workspaces/{name}/state-file. */
export const registerWorkspaceRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workspaces', summary: 'List workspaces (name order); filesystem=true merges the folders on disk', tags: ['workspaces'], sideEffects: 'none',
    query: listQuery,
    handler: async ({ query, scope }) => {
      const res = await listWorkspaces(app, { ...query, org_uuid: await orgFilterFor(app, scope, query.org) });
      return { ...listEnvelope(res.data, res.total, query.offset, query.limit), ...(res.workspaces_dir ? { workspaces_dir: res.workspaces_dir } : {}) };
    },
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workspaces/:name', summary: 'One workspace', tags: ['workspaces'], sideEffects: 'none',
    params: nameParams,
    responses: { 200: { description: '{ data: Workspace }' }, 400: { description: 'Invalid workspace name' }, 404: { description: 'Workspace not found: <name>' } },
    handler: async ({ params, scope }) => ({ data: await getWorkspace(app, params.name, scope) }),
  });
  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/workspaces/:name', summary: 'Delete a workspace and its data; purge_files=true also removes its folder', tags: ['workspaces'], sideEffects: 'writes',
    params: nameParams,
    query: z.object({ purge_files: boolParam('purge_files'), purge: boolParam('purge') }),
    responses: { 200: { description: 'Deleted' }, 400: { description: 'Invalid workspace name' }, 404: { description: 'Workspace not found: <name>' }, 409: { description: 'The workspace has active runs' } },
    handler: ({ params, query }) => deleteWorkspace(app, params.name, { purgeFiles: Boolean(query.purge_files ?? query.purge) }),
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workspaces/:name/state-file', summary: 'A run state file of the workspace (content capped at 5 MiB)', tags: ['workspaces'], sideEffects: 'none',
    params: nameParams,
    query: z.object({ state_file: z.string().optional() }),
    responses: { 200: { description: '{ workspace, state_file, file_path, content, size, truncated }' }, 400: { description: 'Invalid name, state_file or path' }, 404: { description: 'Workspace or file not found' } },
    handler: ({ params, query, scope }) => readStateFile(app, params.name, query.state_file, scope),
  });
};
