/**
 * The audit log: every state-changing request (who, role, orgs, route, object, result, client
 * address, time), appended by the server's onResponse hook, plus user and token changes made with
 * the CLI. Request bodies are never recorded; error messages are masked for settings secrets.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditFilter, AuditRecord } from '../store/access.js';
import type { Page } from '../store/types.js';
import { settingsSecretValues } from '../settings/redact.js';
import { maskSecrets } from '../workflow/tpl-redact.js';
import { errors } from '../errors.js';
import type { AppContext } from './context.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True for requests the audit log records: every method but GET/HEAD/OPTIONS, and routes declared to change state. */
export function isAudited(req: FastifyRequest): boolean {
  const effects = (req.routeOptions?.config as { sideEffects?: string } | undefined)?.sideEffects;
  return !SAFE_METHODS.has(req.method) || (effects !== undefined && effects !== 'none');
}

function resultOf(status: number): 'ok' | 'denied' | 'error' {
  if (status < 400) return 'ok';
  return status === 401 || status === 403 || status === 429 ? 'denied' : 'error';
}

/** Appends the audit row of one answered request; never throws (auditing must not change the answer). */
export async function recordRequest(app: AppContext, req: FastifyRequest, reply: FastifyReply, error?: string): Promise<void> {
  try {
    const p = req.principal;
    const loginName = req.routeOptions?.url === '/osm/api/login' ? (req.body as { username?: unknown } | undefined)?.username : undefined;
    const params = req.params && typeof req.params === 'object' && Object.keys(req.params).length > 0 ? JSON.stringify(req.params) : '';
    const secrets = error ? settingsSecretValues(app.settings().settings) : [];
    await app.repos.access.audit({
      actor: p?.name ?? (typeof loginName === 'string' ? loginName.slice(0, 128) : 'anonymous'),
      actor_kind: p?.kind ?? (typeof loginName === 'string' ? 'login' : 'anonymous'),
      role: p?.role ?? '',
      orgs: p?.orgs ?? [],
      method: req.method,
      route: req.routeOptions?.url ?? '(no route)',
      path: (req.url.split('?')[0] ?? '').slice(0, 512),
      object: params.slice(0, 512),
      status: reply.statusCode,
      result: resultOf(reply.statusCode),
      client_ip: req.ip ?? '',
      detail: error ? maskSecrets(error, secrets).slice(0, 500) : '',
    });
  } catch (err) {
    req.log.error({ err }, 'audit log write failed');
  }
}

/** Records a change made from the command line (user and token management). */
export async function recordCli(app: AppContext, action: string, object: string, ok = true, detail = ''): Promise<void> {
  try {
    await app.repos.access.audit({
      actor: process.env.USER || process.env.LOGNAME || `uid:${process.getuid?.() ?? '?'}`,
      actor_kind: 'cli', role: 'admin', orgs: [], method: 'CLI', route: action, path: action, object, status: ok ? 0 : 1, result: ok ? 'ok' : 'error', client_ip: '', detail,
    });
  } catch {
    // The change itself succeeded; a failing audit write shows in the store's own errors.
  }
}

export interface AuditQuery extends AuditFilter {}

const SINCE_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * `since` is compared with the stored ISO times, so it must be a date or date-time: it is
 * normalized to ISO UTC, and anything else (`garbage`, `2026-13-45`) is a 400, not an empty list.
 */
export function auditSince(since: string | undefined): string | undefined {
  if (since === undefined || since.trim() === '') return undefined;
  const t = since.trim();
  const ms = SINCE_RE.test(t) ? Date.parse(t) : NaN;
  if (!Number.isFinite(ms)) throw errors.validation(`Invalid since: ${JSON.stringify(since)} (an ISO date or date-time such as 2026-01-31 or 2026-01-31T12:00:00Z)`);
  return new Date(ms).toISOString();
}

/** GET /osm/api/audit and `osm audit`: newest first. */
export async function listAudit(app: AppContext, q: AuditQuery, page: Page): Promise<{ data: AuditRecord[]; total: number }> {
  return app.repos.access.listAudit({ ...q, since: auditSince(q.since) }, page);
}

/** Every matching row, oldest first, as JSON lines (the export format). */
export async function* auditJsonLines(app: AppContext, q0: AuditQuery, batch = 1000): AsyncGenerator<string> {
  const q = { ...q0, since: auditSince(q0.since) };
  let after = q.after_id ?? 0;
  for (;;) {
    const rows = (await app.repos.access.listAudit({ ...q, after_id: after }, { offset: 0, limit: batch }, 'asc')).data;
    if (rows.length === 0) return;
    for (const r of rows) yield `${JSON.stringify(r)}\n`;
    after = rows[rows.length - 1]!.id;
    if (rows.length < batch) return;
  }
}
