import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { errors } from '../errors.js';
import type { AppContext } from '../services/context.js';
import { scopeOf, type Scope } from '../auth/scope.js';

export type SideEffects = 'none' | 'writes' | 'executes';

export interface HandlerContext<Q, B, P> {
  req: FastifyRequest;
  reply: FastifyReply;
  query: Q;
  body: B;
  params: P;
  app: AppContext;
  /** What the caller may see: its bound orgs, or everything (src/auth/scope.ts). */
  scope: Scope;
}

export interface RouteSpec<Q = unknown, B = unknown, P = unknown> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  summary: string;
  tags: string[];
  /** What the route may do; GET routes must be 'none' (checked by a test). */
  sideEffects: SideEffects;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  params?: z.ZodType<P>;
  /** How the body arrives: JSON (default when `body` is set), raw text, multipart, or none. */
  bodyKind?: 'json' | 'text' | 'multipart' | 'none';
  /** Longer explanation for the OpenAPI document (streams state their event contract here). */
  description?: string;
  /**
   * Documented responses (status → description and optional JSON schema) for OpenAPI; `content`
   * documents other media types (text/event-stream, text/plain …) with an example.
   */
  responses?: Record<number, { description: string; schema?: z.ZodType; content?: Record<string, { example?: string }> }>;
  /** Message when the JSON body fails its schema (default: every issue as `path: message`). */
  bodyError?: string;
  handler: (ctx: HandlerContext<Q, B, P>) => unknown | Promise<unknown>;
}

/** Route specs per server instance, for the OpenAPI document and the side-effect test. */
const registries = new WeakMap<FastifyInstance, RouteSpec<any, any, any>[]>();

/** Every route defined on a server. */
export function routesOf(server: FastifyInstance): RouteSpec<any, any, any>[] {
  return registries.get(server) ?? [];
}

/** Formats zod issues as `path: message`, all of them. */
export function zodMessage(err: z.ZodError, prefix = ''): string {
  return err.issues
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
      return `${prefix}${path ? `${path}: ` : ''}${i.message}`;
    })
    .join('; ');
}

/** Parses a value with a schema; failures become a 400 with every issue listed. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string, override?: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw errors.validation(override ?? `Invalid ${what}: ${zodMessage(r.error)}`);
}

/**
 * Defines a route: input parsed with zod (every issue reported as a 400 in the error envelope),
 * one handler call, the result sent as JSON (or as set on the reply). Routes stay thin: they parse,
 * call one service function, format.
 */
export function defineRoute<Q, B, P>(server: FastifyInstance, app: AppContext, spec: RouteSpec<Q, B, P>): void {
  let list = registries.get(server);
  if (!list) {
    list = [];
    registries.set(server, list);
  }
  list.push(spec as RouteSpec<any, any, any>);
  server.route({
    method: spec.method,
    url: spec.url,
    config: { sideEffects: spec.sideEffects },
    handler: async (req, reply) => {
      const query = spec.query ? parseWith(spec.query, req.query ?? {}, 'query parameters') : (req.query as Q);
      const params = spec.params ? parseWith(spec.params, req.params ?? {}, 'path parameters') : (req.params as P);
      let body = req.body as B;
      if (spec.body && (spec.bodyKind ?? 'json') === 'json') {
        if (req.body === undefined || req.body === null || typeof req.body !== 'object') {
          throw errors.invalidBody();
        }
        body = parseWith(spec.body, req.body, 'request body', spec.bodyError);
      }
      const result = await spec.handler({ req, reply, query, body, params, app, scope: scopeOf(req.principal) });
      if (reply.sent) return reply;
      return result;
    },
  });
}

// ---- shared query schemas -------------------------------------------------------------------

/** A non-negative integer query value (strings from the query string); rejects junk with a message. */
export function intParam(name: string, opts: { min?: number; max?: number; cap?: number; default?: number } = {}) {
  return z
    .union([z.string(), z.number()])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return opts.default;
      const text = String(v).trim();
      if (!/^-?\d+$/.test(text)) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer, got ${JSON.stringify(String(v))}` });
        return z.NEVER;
      }
      let n = Number(text);
      // Beyond 2^53 the number is no longer the one given (and the database refuses it): a cap
      // applies (limit), otherwise it is out of range.
      if (!Number.isSafeInteger(n) && !(opts.cap !== undefined && n > opts.cap)) {
        ctx.addIssue({ code: 'custom', message: `${name} is out of range (at most ${Number.MAX_SAFE_INTEGER}), got ${text.length > 40 ? `${text.slice(0, 40)}…` : text}` });
        return z.NEVER;
      }
      if (opts.min !== undefined && n < opts.min) {
        ctx.addIssue({ code: 'custom', message: `${name} must be ≥ ${opts.min}, got ${n}` });
        return z.NEVER;
      }
      if (opts.max !== undefined && n > opts.max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be ≤ ${opts.max}, got ${n}` });
        return z.NEVER;
      }
      if (opts.cap !== undefined && n > opts.cap) n = opts.cap;
      return n;
    });
}

export const MAX_LIMIT = 10_000;

/** offset (default 0) and limit (default per resource, capped at 10000) of list endpoints. */
export function paginationShape(defaultLimit = 20) {
  return {
    offset: intParam('offset', { min: 0, default: 0 }).transform((v) => v ?? 0),
    limit: intParam('limit', { min: 1, cap: MAX_LIMIT, default: defaultLimit }).transform((v) => v ?? defaultLimit),
  };
}

/** A boolean query value: true/false/1/0/yes/no (case-insensitive). */
export function boolParam(name: string) {
  return z
    .union([z.string(), z.boolean()])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      if (typeof v === 'boolean') return v;
      const s = v.toLowerCase();
      if (['true', '1', 'yes'].includes(s)) return true;
      if (['false', '0', 'no'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false, got ${JSON.stringify(v)}` });
      return z.NEVER;
    });
}

/** The list envelope of the spec. */
export function listEnvelope<T>(data: T[], total: number, offset: number, limit: number) {
  return { data, pagination: { total, offset, limit } };
}
