/**
 * Outbound webhooks (reference §1.18): when `notification.enabled` and an entry's `enabled`, a
 * finished run is POSTed as `{ event: workflow_<status>, timestamp, data }` with the entry's
 * headers, timeout and retry_count (total attempts; backoff 1 s, 2 s, 4 s …; any 2xx succeeds).
 *
 * Every attempt is recorded as a `webhook.delivery` event so a notification that silently never
 * arrives (field-notes #10) shows up in the event log. URLs often embed a secret (Slack, Discord)
 * and headers carry tokens, so records and errors only ever name the host.
 *
 * Targets come from settings API clients can write (`PUT /settings/yaml`), so every delivery
 * follows the outbound policy (src/util/outbound.ts, `server.outbound_allowlist`, read per
 * delivery): a loopback, private or metadata host is refused before connecting, a name is judged
 * by the addresses it resolves to inside the socket's lookup, and redirects are never followed.
 * A refusal is recorded as a failed delivery with its reason and is not retried.
 */
import { Agent, request, type Dispatcher } from 'undici';
import { messageOf } from '../errors.js';
import type { ArtifactRecord, RunRecord } from '../store/index.js';
import type { WebhookSettings } from '../settings/index.js';
import type { AppContext } from '../services/context.js';
import { outboundGuard, outboundPolicyOf } from '../util/outbound.js';

export type WebhookEvent = 'workflow_completed' | 'workflow_failed' | 'workflow_cancelled';

export interface WebhookPayload {
  event: WebhookEvent;
  timestamp: string;
  data: {
    workflow: string;
    kind: string;
    target: string;
    status: string;
    duration: number;
    run_uuid: string;
    error: string;
    artifacts: string[];
    message: string;
  };
}

export interface DeliveryResult {
  url_host: string;
  delivered: boolean;
  attempts: number;
  status: number;
  error: string;
}

export interface NotifyOptions {
  /** Base of the exponential backoff between attempts (default 1000 ms: waits 1 s, 2 s, 4 s …). */
  backoffMs?: number;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/** The event name of a terminal run status, or undefined for a status that is not notified. */
export function webhookEventOf(status: string): WebhookEvent | undefined {
  if (status === 'completed') return 'workflow_completed';
  if (status === 'failed') return 'workflow_failed';
  if (status === 'cancelled') return 'workflow_cancelled';
  return undefined;
}

/** The payload of a finished run. */
export function runPayload(run: RunRecord, artifacts: (string | ArtifactRecord)[], now = new Date()): WebhookPayload | undefined {
  const event = webhookEventOf(run.status);
  if (!event) return undefined;
  const start = run.started_at ? Date.parse(run.started_at) : NaN;
  const end = run.completed_at ? Date.parse(run.completed_at) : now.getTime();
  const duration = Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, (end - start) / 1000) : 0;
  return {
    event,
    timestamp: now.toISOString(),
    data: {
      workflow: run.workflow_name,
      kind: run.workflow_kind,
      target: run.target,
      status: run.status,
      duration: Math.round(duration * 1000) / 1000,
      run_uuid: run.run_uuid,
      error: run.error_message ?? '',
      artifacts: artifacts.map((a) => (typeof a === 'string' ? a : a.artifact_path)),
      message: '',
    },
  };
}

/** The host of a URL (never its path or query, which may hold a secret). */
export function urlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid url)';
  }
}

/** An error message with any occurrence of the URL (or its path) removed. */
function cleanError(err: unknown, url: string): string {
  let msg = messageOf(err);
  try {
    const u = new URL(url);
    for (const part of [url, u.pathname + u.search, u.search].filter((p) => p.length > 1)) msg = msg.split(part).join('');
  } catch {
    msg = msg.split(url).join('');
  }
  return msg.slice(0, 500);
}

async function attempt(hook: WebhookSettings, body: string, dispatcher: Dispatcher, refused: { why: string }): Promise<{ status: number; error: string }> {
  const timeoutMs = Math.max(1, Number(hook.timeout ?? 30)) * 1000;
  try {
    const res = await request(hook.url, {
      method: 'POST',
      headers: { ...(hook.headers ?? {}), 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      dispatcher,
    });
    // Drain a bounded amount so the connection can be reused, then drop the rest.
    let read = 0;
    for await (const chunk of res.body) {
      read += (chunk as Buffer).length;
      if (read > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        break;
      }
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return { status: res.statusCode, error: ok ? '' : `HTTP ${res.statusCode}` };
  } catch (err) {
    if (refused.why) return { status: 0, error: refused.why };
    const name = (err as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError' || /timeout/i.test(messageOf(err))) return { status: 0, error: `timed out after ${timeoutMs / 1000}s` };
    return { status: 0, error: messageOf(err) };
  }
}

/** Sends one payload to one webhook with its retries; records every attempt as an event. */
export async function deliverWebhook(app: Pick<AppContext, 'repos' | 'settings'>, hook: WebhookSettings, payload: { event: string } & Record<string, unknown>, run?: RunRecord, opts: NotifyOptions = {}): Promise<DeliveryResult> {
  const host = urlHost(hook.url);
  const attempts = Math.max(1, Math.trunc(Number(hook.retry_count ?? 3)) || 1);
  const body = JSON.stringify(payload);
  const backoff = opts.backoffMs ?? 1000;
  const record = async (i: number, outcome: { status: number; error: string }): Promise<void> => {
    try {
      await app.repos.events.insert({
        topic: 'webhook.delivery',
        name: payload.event,
        source: 'notifier',
        source_type: 'webhook',
        data_type: 'webhook',
        data: { url_host: host, status: outcome.status, attempt: i, attempts, delivered: outcome.error === '', error: outcome.error, event: payload.event },
        workspace: run?.workspace ?? '',
        run_id: run?.run_uuid ?? '',
        workflow_name: run?.workflow_name ?? '',
        processed: true,
        error: outcome.error,
      });
    } catch {
      // The delivery outcome matters more than its record; a closed store must not hide it.
    }
  };
  const guard = outboundGuard(outboundPolicyOf(app.settings().settings));
  let early: string | null;
  try {
    early = guard.checkUrl(new URL(hook.url));
  } catch {
    early = 'invalid webhook URL';
  }
  if (early) {
    await record(1, { status: 0, error: early });
    return { url_host: host, delivered: false, attempts: 1, status: 0, error: early };
  }
  const refused = { why: '' };
  const dispatcher = new Agent({
    connect: { lookup: guard.lookup((why) => (refused.why = why)), ...(hook.skip_tls_verify ? { rejectUnauthorized: false } : {}) },
  });
  let last = { status: 0, error: '' };
  try {
    for (let i = 1; i <= attempts; i++) {
      last = await attempt(hook, body, dispatcher, refused);
      last.error = last.error ? cleanError(last.error, hook.url) : '';
      await record(i, last);
      if (last.error === '') return { url_host: host, delivered: true, attempts: i, status: last.status, error: '' };
      // A refusal will not change on retry.
      if (refused.why) return { url_host: host, delivered: false, attempts: i, status: 0, error: last.error };
      if (i < attempts) await new Promise((r) => setTimeout(r, backoff * 2 ** (i - 1)));
    }
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
  return { url_host: host, delivered: false, attempts, status: last.status, error: last.error };
}

/**
 * Notifies every enabled webhook whose `events` filter (empty = all) accepts the run's terminal
 * status. Never throws: failures are recorded as `webhook.delivery` events and returned.
 */
export async function notifyRunFinished(app: Pick<AppContext, 'repos' | 'settings'>, run: RunRecord, artifacts: (string | ArtifactRecord)[] = [], opts: NotifyOptions = {}): Promise<DeliveryResult[]> {
  const notification = app.settings().settings.notification;
  if (!notification?.enabled) return [];
  const payload = runPayload(run, artifacts);
  if (!payload) return [];
  const hooks = (notification.webhooks ?? []).filter((h) => h.enabled && h.url && (!h.events?.length || h.events.includes(payload.event)));
  return Promise.all(hooks.map((h) => deliverWebhook(app, h, payload as unknown as { event: string } & Record<string, unknown>, run, opts)));
}
