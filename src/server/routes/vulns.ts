import { z } from 'zod';
import { defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { createVuln, deleteVuln, getVuln, importVulns, listVulns, parseSeverityList, vulnSummary } from '../../services/vulns.js';
import { vulnDiff } from '../../services/diffs.js';
import { orgFilterFor, requireWorkspaceInScope } from '../../auth/scope.js';

const listQuery = z.object({
  workspace: z.string().optional(),
  severity: z.string().optional(),
  confidence: z.string().optional(),
  asset_value: z.string().optional(),
  org: z.string().optional(),
  ...paginationShape(20),
});

/** Any JSON object; the service checks the fields so that a missing workspace gets its exact message. */
const objectBody = z.record(z.string(), z.unknown());

/** Vulnerabilities: list, summary, diff, one, create, delete and bulk import. */
export const registerVulnRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/vulnerabilities', summary: 'List vulnerabilities (severity may be a comma list)', tags: ['vulnerabilities'], sideEffects: 'none',
    query: listQuery,
    handler: async ({ query, scope }) => {
      const r = await listVulns(app, { workspace: query.workspace, severity: parseSeverityList(query.severity), confidence: query.confidence, asset_value: query.asset_value, org_uuid: await orgFilterFor(app, scope, query.org) }, query);
      return listEnvelope(r.data, r.total, query.offset, query.limit);
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/vulnerabilities/summary', summary: 'Counts by severity', tags: ['vulnerabilities'], sideEffects: 'none',
    query: z.object({ workspace: z.string().optional() }),
    handler: async ({ query, scope }) => {
      await requireWorkspaceInScope(app.repos, scope, query.workspace);
      return { data: await vulnSummary(app, query.workspace, scope.orgs ?? undefined) };
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/vulnerabilities/diff', summary: 'Vulnerabilities added, removed and changed in a time window', tags: ['vulnerabilities'], sideEffects: 'none',
    query: z.object({ workspace: z.string().optional(), from: z.string().optional(), to: z.string().optional() }),
    handler: async ({ query, scope }) => ({ data: await vulnDiff(app, query, scope) }),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/vulnerabilities/:id', summary: 'One vulnerability', tags: ['vulnerabilities'], sideEffects: 'none',
    params: z.object({ id: z.string() }),
    handler: async ({ params, scope }) => ({ data: await getVuln(app, params.id, scope) }),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/vulnerabilities', summary: 'Create a vulnerability (plain insert)', tags: ['vulnerabilities'], sideEffects: 'writes',
    body: objectBody,
    handler: async ({ body, reply, scope }) => {
      const data = await createVuln(app, body, scope);
      reply.status(201);
      return { data, message: 'Vulnerability created successfully' };
    },
  });

  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/vulnerabilities/:id', summary: 'Delete a vulnerability', tags: ['vulnerabilities'], sideEffects: 'writes',
    params: z.object({ id: z.string() }),
    handler: async ({ params, scope }) => {
      await deleteVuln(app, params.id, scope);
      return { message: 'Vulnerability deleted successfully' };
    },
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/vulnerabilities/import', summary: 'Import findings (osm or nuclei shape), deduplicated by fingerprint', tags: ['vulnerabilities'], sideEffects: 'writes',
    body: objectBody,
    handler: ({ body, scope }) => importVulns(app, body, scope),
  });
};
