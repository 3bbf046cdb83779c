import { accessOf } from '../access.js';
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { VERSION } from '../../version.js';
import { routesOf, type RouteSpec } from '../route.js';

function jsonSchema(schema: z.ZodType | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  try {
    const s = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete s.$schema;
    return s;
  } catch {
    return {};
  }
}

const ENVELOPE = {
  type: 'object',
  properties: { error: { type: 'boolean', const: true }, message: { type: 'string' } },
  required: ['error', 'message'],
};

function operation(spec: RouteSpec<any, any, any>): Record<string, unknown> {
  const parameters: Record<string, unknown>[] = [];
  const paramNames = [...spec.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
  for (const name of paramNames) parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  const q = jsonSchema(spec.query) as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(q?.properties ?? {})) {
    parameters.push({ name, in: 'query', required: (q?.required ?? []).includes(name), schema });
  }
  const op: Record<string, unknown> = {
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: spec.tags,
    operationId: `${spec.method.toLowerCase()}_${spec.url.replace(/[^A-Za-z0-9]+/g, '_')}`,
    'x-side-effects': spec.sideEffects,
    parameters,
    responses: {} as Record<string, unknown>,
  };
  const isPublic = accessOf(spec.method, spec.url) === 'public';
  if (!isPublic) op.security = [{ apiKey: [] }, { bearer: [] }];
  op['x-required-role'] = accessOf(spec.method, spec.url);
  if (spec.body && (spec.bodyKind ?? 'json') === 'json') {
    op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(spec.body) } } };
  } else if (spec.bodyKind === 'text') {
    op.requestBody = { required: true, content: { 'text/yaml': { schema: { type: 'string' } }, 'application/yaml': { schema: { type: 'string' } } } };
  } else if (spec.bodyKind === 'multipart') {
    op.requestBody = { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } } } };
  }
  const responses = op.responses as Record<string, unknown>;
  for (const [status, r] of Object.entries(spec.responses ?? { 200: { description: 'Success' } })) {
    const content: Record<string, unknown> = r.schema ? { 'application/json': { schema: jsonSchema(r.schema) } } : {};
    for (const [type, c] of Object.entries(r.content ?? {})) content[type] = { schema: { type: 'string' }, ...(c.example ? { example: c.example } : {}) };
    responses[status] = { description: r.description, ...(Object.keys(content).length ? { content } : {}) };
  }
  responses['400'] ??= { description: 'Bad request', content: { 'application/json': { schema: ENVELOPE } } };
  if (!isPublic) responses['401'] ??= { description: 'Missing or invalid credentials', content: { 'application/json': { schema: ENVELOPE } } };
  if (!isPublic && accessOf(spec.method, spec.url) !== 'viewer') responses['403'] ??= { description: `Forbidden: needs the ${accessOf(spec.method, spec.url)} role`, content: { 'application/json': { schema: ENVELOPE } } };
  return op;
}

/** The OpenAPI 3 document, generated from the same zod schemas the routes parse with. */
export function buildOpenApi(server: FastifyInstance): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of routesOf(server)) {
    const path = spec.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = operation(spec);
  }
  return {
    openapi: '3.0.3',
    info: { title: 'osm API', version: VERSION, description: 'Osmedeus-compatible workflow automation API' },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-osm-api-key' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
      schemas: { Error: ENVELOPE },
    },
    paths,
  };
}

function swaggerDir(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return dirname(require.resolve('swagger-ui-dist/package.json'));
  } catch {
    return undefined;
  }
}

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** `/openapi.json` and a Swagger UI page at `/swagger` (assets served from swagger-ui-dist). */
export function registerOpenApi(server: FastifyInstance): void {
  let cached: Record<string, unknown> | undefined;
  server.get('/openapi.json', async () => (cached ??= buildOpenApi(server)));
  const dir = swaggerDir();
  const page = () => `<!doctype html><html><head><meta charset="utf-8"><title>osm API</title>
<link rel="stylesheet" href="/swagger/assets/swagger-ui.css"></head><body><div id="swagger-ui"></div>
<script src="/swagger/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui' });</script></body></html>`;
  // `/swagger/index.html` is where the reference's Swagger UI lives (echo-swagger); `/swagger` is osm's.
  for (const url of ['/swagger', '/swagger/', '/swagger/index.html']) {
    server.get(url, async (_req, reply) => {
      reply.type('text/html; charset=utf-8');
      return page();
    });
  }
  // Browsers ask for it on every page of the API; an empty answer beats a 404 in the logs.
  server.get('/favicon.ico', async (_req, reply) => {
    const png = dir ? join(dir, 'favicon-32x32.png') : undefined;
    if (png && existsSync(png)) return reply.type('image/png').header('cache-control', 'public, max-age=86400').send(readFileSync(png));
    return reply.status(204).send();
  });
  server.get('/swagger/assets/:file', async (req, reply) => {
    const file = (req.params as { file: string }).file;
    const type = ASSETS[file];
    if (!dir || !type || !existsSync(join(dir, file))) {
      return reply.status(404).send({ error: true, message: `Route GET /swagger/assets/${file} not found` });
    }
    reply.type(type).header('cache-control', 'public, max-age=86400');
    return readFileSync(join(dir, file));
  });
}
