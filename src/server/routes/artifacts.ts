import { z } from 'zod';
import { boolParam, defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { listArtifacts, openArtifact } from '../../services/artifacts.js';

const listQuery = z.object({
  workspace: z.string().optional(),
  search: z.string().optional(),
  /** Accepted and ignored, like the reference. */
  status_code: z.unknown().optional(),
  statusCode: z.unknown().optional(),
  verify_exist: boolParam('verify_exist'),
  ...paginationShape(20),
});

/** GET /artifacts (every run's artifacts) and GET /artifacts/{workspace_name} (one file of a workspace folder). */
export const registerArtifactRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/artifacts', summary: 'List artifacts (newest first); verify_exist=true drops rows whose file is gone', tags: ['artifacts'], sideEffects: 'none',
    query: listQuery,
    responses: { 200: { description: '{ data: [Artifact (+ path_exists, path_is_dir with verify_exist)], pagination }' } },
    handler: async ({ query, scope }) => {
      const r = await listArtifacts(app, query, scope);
      return listEnvelope(r.data, r.total, query.offset, query.limit);
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/artifacts/:workspace_name', summary: 'Download one file of a workspace folder (artifact_path relative to it)', tags: ['artifacts'], sideEffects: 'none',
    params: z.object({ workspace_name: z.string() }),
    query: z.object({ artifact_path: z.string().optional() }),
    responses: {
      200: { description: 'The raw file, content type by extension' },
      400: { description: 'Invalid workspace name | artifact_path query parameter is required | Invalid artifact_path | artifact_path must point to a file' },
      403: { description: 'Path traversal attempt detected' },
      404: { description: 'Artifact not found' },
    },
    handler: async ({ params, query, reply, scope }) => {
      const f = await openArtifact(app, params.workspace_name, query.artifact_path, scope);
      // Workspace files hold scanned (hostile) content: never sniffed, never run as a page of this origin.
      reply
        .header('Content-Type', f.contentType)
        .header('Content-Length', String(f.size))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "sandbox; default-src 'none'");
      return reply.send(f.stream);
    },
  });
};
