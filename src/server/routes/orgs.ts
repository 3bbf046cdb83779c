import { z } from 'zod';
import { boolParam, defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { createOrg, deleteOrg, getOrg, getOrgStats, listOrgs, updateOrg } from '../../services/orgs.js';

/** Any JSON object; the service checks the fields so that each problem gets the reference's message. */
const objectBody = z.record(z.string(), z.unknown());
const refParams = z.object({ uuid: z.string().min(1) });

/** Organizations: list (with stats), create, one, stats, update / assign workspaces, delete. */
export const registerOrgRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/orgs', summary: 'Every org with its stats (default org first, then by name)', tags: ['orgs'], sideEffects: 'none',
    handler: ({ scope }) => listOrgs(app, scope),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/orgs', summary: 'Create an org (name unique, case-insensitive)', tags: ['orgs'], sideEffects: 'writes',
    body: objectBody,
    responses: { 201: { description: '{ data: Org }' }, 400: { description: 'name is required / invalid request body / name or uuid taken' } },
    handler: async ({ body, reply }) => {
      const data = await createOrg(app, body);
      reply.status(201);
      return { data };
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/orgs/:uuid', summary: 'One org by uuid or name (case-insensitive)', tags: ['orgs'], sideEffects: 'none',
    params: refParams,
    responses: { 200: { description: '{ data: Org }' }, 404: { description: 'org not found: <ref>' } },
    handler: async ({ params, scope }) => ({ data: await getOrg(app, params.uuid, scope) }),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/orgs/:uuid/stats', summary: 'Workspaces, assets, vulnerabilities and runs of an org', tags: ['orgs'], sideEffects: 'none',
    params: refParams,
    responses: { 200: { description: '{ data: OrgStats }' }, 404: { description: 'org not found: <ref>' } },
    handler: async ({ params, scope }) => ({ data: await getOrgStats(app, params.uuid, scope) }),
  });

  defineRoute(server, app, {
    method: 'PUT', url: '/osm/api/orgs/:uuid', summary: 'Rename, describe, tag an org; assign workspaces (with their assets, vulnerabilities and runs)', tags: ['orgs'], sideEffects: 'writes',
    params: refParams,
    body: objectBody,
    responses: {
      200: { description: '{ data: Org, assigned? }' },
      400: { description: 'invalid request body' },
      403: { description: 'the default org cannot be deleted or renamed' },
      404: { description: 'org not found: <ref>' },
      409: { description: 'another org has that name' },
    },
    handler: ({ params, body }) => updateOrg(app, params.uuid, body),
  });

  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/orgs/:uuid', summary: "Delete an org: its rows move to the default org, or are deleted with purge=true", tags: ['orgs'], sideEffects: 'writes',
    params: refParams,
    query: z.object({ purge: boolParam('purge') }),
    responses: {
      200: { description: '{ message, uuid, name, purged, rows }' },
      403: { description: 'the default org cannot be deleted or renamed' },
      404: { description: 'org not found: <ref>' },
      409: { description: 'purge while the org has active runs' },
    },
    handler: ({ params, query }) => deleteOrg(app, params.uuid, Boolean(query.purge)),
  });
};
