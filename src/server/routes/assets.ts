import { z } from 'zod';
import { defineRoute, intParam, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { getAsset, listAssets } from '../../services/assets.js';
import { assetDiff, listAssetDiffs } from '../../services/diffs.js';
import { orgFilterFor, requireWorkspaceInScope } from '../../auth/scope.js';

const listQuery = z.object({
  workspace: z.string().optional(),
  asset_type: z.string().optional(),
  status_code: intParam('status_code', { min: 0 }),
  search: z.string().optional(),
  org: z.string().optional(),
  ...paginationShape(20),
});

/** Assets: listing (without raw JSON), one asset, the computed diff and stored diff snapshots. */
export const registerAssetRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/assets', summary: 'List assets (newest first; raw_json_data omitted)', tags: ['assets'], sideEffects: 'none',
    query: listQuery,
    handler: async ({ query, scope }) => {
      const r = await listAssets(app, { workspace: query.workspace, asset_type: query.asset_type, status_code: query.status_code, search: query.search, org_uuid: await orgFilterFor(app, scope, query.org) }, query);
      return listEnvelope(r.data, r.total, query.offset, query.limit);
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/assets/diff', summary: 'Assets added, removed and changed (field by field) in a time window', tags: ['assets'], sideEffects: 'none',
    query: z.object({ workspace: z.string().optional(), from: z.string().optional(), to: z.string().optional() }),
    handler: async ({ query, scope }) => ({ data: await assetDiff(app, query, scope) }),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/assets/diffs', summary: 'Stored asset diff snapshots (one per completed run)', tags: ['assets'], sideEffects: 'none',
    query: z.object({ workspace: z.string().optional(), ...paginationShape(20) }),
    handler: async ({ query, scope }) => {
      await requireWorkspaceInScope(app.repos, scope, query.workspace);
      const r = await listAssetDiffs(app, { workspace: query.workspace }, query, scope);
      return listEnvelope(r.data, r.total, query.offset, query.limit);
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/assets/:id', summary: 'One asset with its raw JSON', tags: ['assets'], sideEffects: 'none',
    params: z.object({ id: z.string() }),
    handler: async ({ params, scope }) => ({ data: await getAsset(app, params.id, scope) }),
  });
};
