/**
 * Event generation and webhook notification functions (reference server-api §1.x payload kinds 2–4,
 * §5.4 event producers):
 *
 * - `generate_event(workspace, topic, source, data_type, data)` records an event in `event_logs`
 *   (unprocessed). A running daemon's scheduler tails that table and fires matching event triggers
 *   within a second; without a daemon the row waits and is replayed when one starts — the
 *   reference's fallback path, used here always, so no HTTP round trip to ourselves is needed.
 *   The structured webhook `{topic, source, data_type, data, timestamp}` is sent too.
 * - `generate_event_from_file(workspace, topic, source, data_type, path)`: one event per non-blank
 *   line (data = the line); returns how many were recorded.
 * - `notify_webhook(message)` / `send_webhook_event(type, data)`: the `message` / `<type>` payloads
 *   to every enabled webhook of `notification.webhooks` (when `notification.enabled`), honouring
 *   each hook's `events` filter; true when at least one hook answered 2xx.
 *
 * - `notify_telegram(message)`, `notify_telegram_channel(channel, message)`, `send_telegram_file(path,
 *   caption?)`, `send_telegram_file_channel(channel, path, caption?)`: the Bot API (`sendMessage`,
 *   `sendDocument`) with `notification.telegram` (`enabled`, `bot_token`, `chat_id`,
 *   `telegram_channel_map` name → chat id, `api_url`); true when Telegram answered ok.
 *
 * Like every function, they never throw: failures answer false / 0 and print a warning.
 *
 * Webhook and Telegram targets come from settings that API clients can write (`PUT
 * /settings/yaml`), so every delivery follows the outbound policy (src/util/outbound.ts): a
 * loopback, private or metadata destination is refused, with a warning, unless it is listed in
 * `server.outbound_allowlist` — also when a workflow's function step sends it.
 */
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, asText, forEachLine, isMissing } from './helpers.js';
import { refuseUrl, runNetChild } from './http-child.js';
import { ALLOWLIST_SETTING, outboundPolicyOf, type OutboundPolicy } from '../../util/outbound.js';
import type { Store } from '../../store/index.js';

interface HookSettings {
  url?: string;
  enabled?: boolean;
  headers?: Record<string, string>;
  timeout?: number;
  events?: string[];
}

interface TelegramSettings {
  enabled?: boolean;
  bot_token?: string;
  chat_id?: string | number;
  telegram_channel_map?: Record<string, string | number>;
  api_url?: string;
}

interface NotificationSettings {
  enabled?: boolean;
  webhooks?: HookSettings[];
  telegram?: TelegramSettings;
}

/** The settings object of the context (the engine passes loaded settings, the API plain ones). */
function notificationOf(ctx: FnContext): NotificationSettings {
  const raw = ctx.settings as { settings?: { notification?: NotificationSettings }; notification?: NotificationSettings } | undefined;
  return raw?.settings?.notification ?? raw?.notification ?? {};
}

function storeOf(ctx: FnContext): Store | undefined {
  const s = ctx.store as Store | undefined;
  return s && typeof s === 'object' && 'events' in s ? s : undefined;
}

function warn(ctx: FnContext, msg: string): void {
  (ctx.log ?? ((l: string) => process.stdout.write(`${l}\n`)))(`[WARN] ${msg}`);
}

/** The policy notification deliveries follow: the evaluation's, else the settings' allowlist. */
function deliveryPolicy(ctx: FnContext): OutboundPolicy {
  return ctx.outbound ?? outboundPolicyOf(ctx.settings);
}

/** Posts one JSON payload to every enabled hook accepting `eventName` ('' = structured events). */
function postToHooks(ctx: FnContext, eventName: string, payload: unknown): { sent: number; delivered: number } {
  const n = notificationOf(ctx);
  if (!n.enabled) return { sent: 0, delivered: 0 };
  const body = JSON.stringify(payload);
  let sent = 0;
  let delivered = 0;
  for (const hook of n.webhooks ?? []) {
    if (!hook?.enabled || !hook.url) continue;
    const filter = hook.events ?? [];
    if (filter.length > 0 && (!eventName || !filter.includes(eventName))) continue;
    sent++;
    const policy = deliveryPolicy(ctx);
    const refused = refuseUrl(policy, hook.url);
    if (refused) {
      warn(ctx, `webhook delivery refused: ${refused}`);
      continue;
    }
    const timeoutMs = Math.max(1, Number(hook.timeout ?? 30)) * 1000;
    const res = runNetChild<{ status?: number; error?: string }>(
      ctx,
      { kind: 'request', url: hook.url, method: 'POST', headers: { ...(hook.headers ?? {}), 'content-type': 'application/json' }, body, timeoutMs },
      timeoutMs * 3 + 5000,
      policy,
    );
    if (res?.status && res.status >= 200 && res.status < 300) delivered++;
    else warn(ctx, `webhook delivery failed: ${res?.error ?? (res?.status ? `HTTP ${res.status}` : 'no answer')}`);
  }
  return { sent, delivered };
}

/** Records one event; false when the topic is empty or there is no database here. */
function recordEvent(ctx: FnContext, workspace: string, topic: string, source: string, dataType: string, data: unknown): boolean {
  const store = storeOf(ctx);
  if (!store) {
    warn(ctx, 'generate_event: no database in this context');
    return false;
  }
  try {
    store.events.insert({
      topic,
      name: topic,
      source: source || 'function',
      source_type: ctx.runUuid ? 'run' : 'eval',
      data_type: dataType,
      data: data === undefined || data === null ? '' : data,
      workspace: workspace || ctx.workspace || '',
      run_id: ctx.runUuid ?? '',
      workflow_name: ctx.workflowName ?? '',
      processed: false,
    });
  } catch (err) {
    warn(ctx, `generate_event: ${(err as Error).message}`);
    return false;
  }
  postToHooks(ctx, '', { topic, source: source || 'function', data_type: dataType, data: data ?? '', timestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') });
  return true;
}

/** A data argument: objects stay objects (stored as JSON), everything else text. */
function dataArg(v: unknown): unknown {
  if (v !== null && typeof v === 'object') return v;
  return isMissing(v) ? '' : asText(v);
}

export const eventFunctions: Record<string, FnImpl> = {
  generate_event: (ctx, workspace, topic, source, dataType, data) => {
    const t = argStr(topic)?.trim() ?? '';
    if (!t || /[\u0000-\u001f]/.test(t)) {
      warn(ctx, 'generate_event: topic is required');
      return false;
    }
    return recordEvent(ctx, argStr(workspace) ?? '', t, argStr(source) ?? '', argStr(dataType) ?? '', dataArg(data));
  },

  generate_event_from_file: (ctx, workspace, topic, source, dataType, path) => {
    const t = argStr(topic)?.trim() ?? '';
    const file = argStr(path) ?? '';
    if (!t || !file) return 0;
    let count = 0;
    const ok = forEachLine(file, (line) => {
      const v = line.trim();
      if (v && recordEvent(ctx, argStr(workspace) ?? '', t, argStr(source) ?? '', argStr(dataType) ?? '', v)) count++;
    });
    if (!ok) warn(ctx, `generate_event_from_file: cannot read ${file}`);
    return count;
  },
};

export const notificationFunctions: Record<string, FnImpl> = {
  notify_webhook: (ctx, message) => {
    const r = postToHooks(ctx, 'message', { event: 'message', timestamp: new Date().toISOString(), data: { message: isMissing(message) ? '' : asText(message) } });
    return r.delivered > 0;
  },

  send_webhook_event: (ctx, type, data) => {
    const name = argStr(type)?.trim() ?? '';
    if (!name) return false;
    let obj: unknown = data;
    if (typeof data === 'string') {
      try {
        obj = JSON.parse(data);
      } catch {
        obj = { message: data };
      }
    }
    const r = postToHooks(ctx, name, { event: name, timestamp: new Date().toISOString(), data: obj && typeof obj === 'object' ? obj : { value: obj ?? null } });
    return r.delivered > 0;
  },
};

const TELEGRAM_TIMEOUT_MS = 30_000;
/** Telegram's limit for a bot message; longer text is cut (the file functions carry the rest). */
const TELEGRAM_TEXT_MAX = 4096;

/** The chat to send to ('' when telegram is off or the channel is unknown; a warning says why). */
function telegramChat(ctx: FnContext, channel?: string): { tg: TelegramSettings; chat: string } | undefined {
  const tg = notificationOf(ctx).telegram ?? {};
  if (!tg.enabled || !tg.bot_token) {
    warn(ctx, 'telegram: notification.telegram is not enabled or has no bot_token');
    return undefined;
  }
  if (channel !== undefined) {
    const id = tg.telegram_channel_map?.[channel];
    if (id === undefined || String(id) === '' || String(id) === '0') {
      warn(ctx, `telegram: unknown channel ${JSON.stringify(channel)} (notification.telegram.telegram_channel_map)`);
      return undefined;
    }
    return { tg, chat: String(id) };
  }
  if (!tg.chat_id || String(tg.chat_id) === '0') {
    warn(ctx, 'telegram: notification.telegram.chat_id is not set');
    return undefined;
  }
  return { tg, chat: String(tg.chat_id) };
}

/** The Bot API call under the delivery policy; a refusal is warned about (host only: the URL holds the token). */
function telegramCall(ctx: FnContext, request: Record<string, unknown>, capMs: number): { status?: number; body?: string; error?: string } | null | 'refused' {
  const policy = deliveryPolicy(ctx);
  const refused = refuseUrl(policy, String(request.url));
  if (refused) {
    warn(ctx, `telegram: ${refused}`);
    return 'refused';
  }
  return runNetChild<{ status?: number; body?: string; error?: string }>(ctx, request, capMs, policy);
}

function telegramUrl(tg: TelegramSettings, method: string): string {
  return `${(tg.api_url || 'https://api.telegram.org').replace(/\/+$/, '')}/bot${tg.bot_token}/${method}`;
}

function telegramOk(ctx: FnContext, res: { status?: number; body?: string; error?: string } | null): boolean {
  if (res?.status === 200) {
    try {
      if ((JSON.parse(res.body ?? '{}') as { ok?: boolean }).ok) return true;
    } catch {
      /* not JSON */
    }
  }
  // Never echo the URL: it holds the bot token.
  // A refusal names only the host; other errors may quote the URL.
  const failure = res?.error ? (res.error.includes(ALLOWLIST_SETTING) ? res.error : 'request failed') : `HTTP ${res?.status ?? 'no answer'}`;
  warn(ctx, `telegram: ${failure}${res?.body ? `: ${res.body.slice(0, 200)}` : ''}`);
  return false;
}

function sendTelegramText(ctx: FnContext, message: unknown, channel?: string): boolean {
  const target = telegramChat(ctx, channel);
  if (!target) return false;
  const text = (isMissing(message) ? '' : asText(message)).slice(0, TELEGRAM_TEXT_MAX);
  if (!text) return false;
  const res = telegramCall(
    ctx,
    { kind: 'request', url: telegramUrl(target.tg, 'sendMessage'), method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: target.chat, text }), timeoutMs: TELEGRAM_TIMEOUT_MS },
    TELEGRAM_TIMEOUT_MS * 3 + 5000,
  );
  return res !== 'refused' && telegramOk(ctx, res);
}

function sendTelegramFile(ctx: FnContext, path: unknown, caption: unknown, channel?: string): boolean {
  const file = argStr(path) ?? '';
  if (!file) return false;
  const target = telegramChat(ctx, channel);
  if (!target) return false;
  const fields: Record<string, string> = { chat_id: target.chat };
  if (!isMissing(caption) && asText(caption)) fields.caption = asText(caption).slice(0, 1024);
  const res = telegramCall(
    ctx,
    { kind: 'upload', url: telegramUrl(target.tg, 'sendDocument'), fields, file, fileField: 'document', timeoutMs: TELEGRAM_TIMEOUT_MS * 4 },
    TELEGRAM_TIMEOUT_MS * 4 + 5000,
  );
  return res !== 'refused' && telegramOk(ctx, res);
}

/**
 * `notify_message_as_file_telegram(path)` (reference: "send file content as a text file"): the
 * content of `path` is uploaded with `sendDocument` as a text file named `<basename>.txt` (the
 * name kept when it already ends in .txt), for messages longer than a Telegram message allows.
 * False (with a warning) when the file is missing or Telegram refuses.
 */
function sendMessageAsFile(ctx: FnContext, path: unknown, channel?: string): boolean {
  const file = argStr(path) ?? '';
  let isFile = false;
  try {
    isFile = file !== '' && statSync(file).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) {
    warn(ctx, `telegram: no such file: ${JSON.stringify(file)}`);
    return false;
  }
  const name = basename(file);
  if (name.toLowerCase().endsWith('.txt')) return sendTelegramFile(ctx, file, undefined, channel);
  const dir = mkdtempSync(join(tmpdir(), 'osm-tg-'));
  try {
    const copy = join(dir, `${name}.txt`);
    copyFileSync(file, copy);
    return sendTelegramFile(ctx, copy, undefined, channel);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const telegramFunctions: Record<string, FnImpl> = {
  notify_message_as_file_telegram: (ctx, path) => sendMessageAsFile(ctx, path),
  notify_message_as_file_telegram_channel: (ctx, channel, path) => sendMessageAsFile(ctx, path, argStr(channel) ?? ''),
  notify_telegram: (ctx, message) => sendTelegramText(ctx, message),
  notify_telegram_channel: (ctx, channel, message) => sendTelegramText(ctx, message, argStr(channel) ?? ''),
  send_telegram_file: (ctx, path, caption) => sendTelegramFile(ctx, path, caption),
  send_telegram_file_channel: (ctx, channel, path, caption) => sendTelegramFile(ctx, path, caption, argStr(channel) ?? ''),
};
