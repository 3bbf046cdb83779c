import { z } from 'zod';
import { defineRoute, intParam, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { addUser, getUser, listUsers, removeUser, setPassword, updateUser } from '../../services/users.js';
import { createToken, listTokens, revokeToken } from '../../services/tokens.js';
import { auditJsonLines, listAudit } from '../../services/audit.js';
import { orgViews } from '../../services/users.js';

const role = z.string();
const orgList = z.array(z.string()).max(100);

/** Users, API tokens, the audit log (admin) and `whoami` (any credential). */
export const registerTeamRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/whoami', summary: 'The calling credential: name, kind, role and bound orgs', tags: ['team'], sideEffects: 'none',
    handler: async ({ req }) => {
      const p = req.principal!;
      return { data: { name: p.name, kind: p.kind, role: p.role, orgs: await orgViews(app, p.orgs) } };
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/users', summary: 'Users (admin)', tags: ['team'], sideEffects: 'none',
    handler: async () => {
      const data = await listUsers(app);
      return { data, count: data.length };
    },
  });
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/users', summary: 'Add a user (admin)', tags: ['team'], sideEffects: 'writes',
    body: z.object({ username: z.string().max(64), password: z.string().max(1024), role, orgs: orgList.optional() }),
    responses: { 201: { description: 'Created' }, 409: { description: 'User already exists' } },
    handler: async ({ body, reply }) => {
      const data = await addUser(app, body);
      reply.status(201);
      return { message: 'User created', data };
    },
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/users/:username', summary: 'One user (admin)', tags: ['team'], sideEffects: 'none',
    params: z.object({ username: z.string() }),
    handler: async ({ params }) => ({ data: await getUser(app, params.username) }),
  });
  defineRoute(server, app, {
    method: 'PUT', url: '/osm/api/users/:username', summary: 'Change a user: role, orgs, password (admin); a password change ends its sessions', tags: ['team'], sideEffects: 'writes',
    params: z.object({ username: z.string() }),
    body: z.object({ role: role.optional(), orgs: orgList.optional(), password: z.string().max(1024).optional() }).strict(),
    handler: async ({ params, body }) => {
      let data = body.role !== undefined || body.orgs !== undefined ? await updateUser(app, params.username, body) : await getUser(app, params.username);
      if (body.password !== undefined) data = await setPassword(app, params.username, body.password);
      return { message: 'User updated', data };
    },
  });
  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/users/:username', summary: 'Remove a user (admin); its sessions end at once', tags: ['team'], sideEffects: 'writes',
    params: z.object({ username: z.string() }),
    handler: ({ params }) => removeUser(app, params.username),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/tokens', summary: 'API tokens (admin); secrets are never shown', tags: ['team'], sideEffects: 'none',
    query: z.object({ all: z.enum(['true', 'false']).optional() }),
    handler: async ({ query }) => {
      const data = await listTokens(app, { all: query.all === 'true' });
      return { data, count: data.length };
    },
  });
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/tokens', summary: 'Create an API token (admin); the secret is in the answer once', tags: ['team'], sideEffects: 'writes',
    body: z.object({ name: z.string().max(64), role, orgs: orgList.optional(), expires: z.string().max(32).optional() }),
    responses: { 201: { description: 'Created; `token` holds the secret' } },
    handler: async ({ body, reply, req }) => {
      const data = await createToken(app, { ...body, createdBy: req.principal?.name ?? '' });
      reply.status(201);
      return { message: 'Token created; store it now, it is not shown again', data };
    },
  });
  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/tokens/:id', summary: 'Revoke an API token by id or name (admin)', tags: ['team'], sideEffects: 'writes',
    params: z.object({ id: z.string() }),
    handler: ({ params }) => revokeToken(app, params.id),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/audit', summary: 'The audit log (admin), newest first; format=jsonl exports every matching row oldest first', tags: ['team'], sideEffects: 'none',
    query: z.object({
      actor: z.string().optional(),
      since: z.string().optional(),
      result: z.enum(['ok', 'denied', 'error']).optional(),
      after_id: intParam('after_id', { min: 0 }),
      format: z.enum(['json', 'jsonl']).optional(),
      ...paginationShape(50),
    }),
    handler: async ({ query, reply }) => {
      const filter = { actor: query.actor, since: query.since, result: query.result, after_id: query.after_id };
      if (query.format === 'jsonl') {
        reply.type('application/x-ndjson; charset=utf-8');
        let text = '';
        for await (const line of auditJsonLines(app, filter)) text += line;
        return reply.send(text);
      }
      const r = await listAudit(app, filter, { offset: query.offset, limit: query.limit });
      return listEnvelope(r.data, r.total, query.offset, query.limit);
    },
  });
};
