import { z } from 'zod';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import type { FastifyReply } from 'fastify';
import { isOsmError } from '../../errors.js';
import { EVAL_RETRY_AFTER_S, evalScript, executeExpression, functionsOf, listFunctions } from '../../services/functions.js';

// `script` is checked by the service so a missing one gives the spec's exact message.
const evalBody = z.object({
  script: z.unknown().optional(),
  target: z.string().optional(),
  params: z.record(z.string(), z.string({ error: 'must be a string' })).optional(),
});
const executeBody = z.object({
  expression: z.unknown().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
});

/** Adds Retry-After to a 429 (all evaluation slots busy) before the error handler answers it. */
async function withRetryAfter<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isOsmError(err) && err.status === 429) void reply.header('retry-after', String(EVAL_RETRY_AFTER_S));
    throw err;
  }
}

/** POST /functions/eval and /functions/execute (execute code: authenticated, recorded), GET /functions/list and /functions. */
export const registerFunctionRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/functions/eval', summary: 'Render a script with target/params, then evaluate it with the utility functions', tags: ['functions'], sideEffects: 'executes',
    body: evalBody,
    responses: {
      200: { description: 'Result', schema: z.object({ result: z.unknown(), rendered_script: z.string() }) },
      400: { description: 'script is required | Template rendering failed: <detail> | Execution failed: <detail> (also a time-out) | invalid target or params' },
      429: { description: 'Too many concurrent evaluations (server.max_concurrent_evals); Retry-After set' },
    },
    handler: ({ body, reply }) => withRetryAfter(reply, () => evalScript(app, { script: typeof body.script === 'string' ? body.script : undefined, target: body.target, params: body.params })),
  });
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/functions/execute', summary: 'Evaluate an expression with context variables', tags: ['functions'], sideEffects: 'executes',
    body: executeBody,
    responses: {
      200: { description: '{ data: { result } }' },
      400: { description: 'expression is required | Execution failed: <detail>' },
      429: { description: 'Too many concurrent evaluations (server.max_concurrent_evals); Retry-After set' },
    },
    handler: ({ body, reply }) => withRetryAfter(reply, () => executeExpression(app, { expression: typeof body.expression === 'string' ? body.expression : undefined, context: body.context })),
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/functions/list', summary: 'The utility function catalogue by category', tags: ['functions'], sideEffects: 'none',
    handler: () => listFunctions(),
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/functions', summary: 'Utility functions, optionally of one category', tags: ['functions'], sideEffects: 'none',
    query: z.object({ category: z.string().optional() }),
    responses: { 200: { description: '{ data, category, total }' }, 404: { description: 'Function category not found: <category>' } },
    handler: ({ query }) => functionsOf(query.category),
  });
};
