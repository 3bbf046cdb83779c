/**
 * The settings file (`osm-settings.yaml`) as a zod schema. Structure and defaults follow the
 * reference (server-api §9.1); every default is declared here, once, and every field is optional
 * in the file so a minimal `base_folder: x` validates. Objects use `.prefault({})` so their
 * children's defaults are filled in when a whole section is absent (zod 4's `.default()` would
 * return the default object unparsed).
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseDuration } from '../util/duration.js';
import { settingsScopeSchema } from '../scope/schema.js';

/**
 * A string field that also accepts YAML numbers/booleans: `password: 123456` is a string to the
 * user, and rejecting it because YAML typed it would only confuse.
 */
const text = (def: string) =>
  z
    .union([z.string(), z.number(), z.boolean()])
    .transform((v) => String(v))
    .default(def);

const bool = (def: boolean) => z.boolean().default(def);
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max).default(def);
const port = (def: number) => z.number().int().min(1).max(65535).default(def);

/** Duration text such as `120s`, `1h` (or plain seconds); checked with the shared duration parser. */
const duration = (def: string) =>
  z
    .union([z.string(), z.number()])
    .transform((v) => String(v))
    .refine((v) => {
      try {
        parseDuration(v);
        return true;
      } catch {
        return false;
      }
    }, 'invalid duration (use seconds, 30s, 5m, 1h30m or 2d)')
    .default(def);

export const environmentsSchema = z
  .object({
    external_binaries_path: text('{{base_folder}}/external-binaries'),
    external_data: text('{{base_folder}}/external-data'),
    external_configs: text('{{base_folder}}/external-configs'),
    // The reference defaults to `$HOME/workspaces-osmedeus`; we keep everything under the base
    // folder so a temporary base folder (tests, CI) is fully hermetic.
    workspaces: text('{{base_folder}}/workspaces'),
    workflows: text('{{base_folder}}/workflows'),
    snapshot: text('{{base_folder}}/snapshot'),
    markdown_report_templates: text('{{base_folder}}/markdown-report-templates'),
    external_agent_configs: text('{{base_folder}}/external-agent-configs'),
    external_scripts: text('{{base_folder}}/external-scripts'),
  })
  .prefault({});

/** libpq's sslmode values. */
export const PG_SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/** True for a parseable `postgres://` / `postgresql://` URL naming a host. */
export function isPostgresUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'postgres:' || u.protocol === 'postgresql:') && u.hostname !== '';
  } catch {
    return false;
  }
}

export const databaseSchema = z
  .object({
    db_engine: z.enum(['sqlite', 'postgresql', 'postgres']).default('sqlite'),
    db_path: text('{{base_folder}}/database-osm.sqlite'),
    host: text('localhost'),
    port: port(5432),
    username: text('osmedeus'),
    // The reference ships `osmedeus`; a fixed default credential is exactly what we avoid.
    password: text(''),
    db_name: text('osmedeus'),
    connection_timeout: int(60),
    ssl_mode: z.enum(PG_SSL_MODES).default('disable'),
    /**
     * One PostgreSQL connection URL (`postgres://user:password@host:5432/db?sslmode=require`);
     * when set it replaces host/port/username/password/db_name/ssl_mode. `OSM_DATABASE_URL` overrides it.
     */
    url: text('').refine((v) => v === '' || isPostgresUrl(v), 'must be a postgres:// or postgresql:// URL with a host (postgres://user:password@host:5432/db)'),
  })
  .prefault({});

export const serverSchema = z
  .object({
    // Loopback by default: listening on another interface is an explicit choice (`--host` or this key).
    host: text('127.0.0.1'),
    port: port(8002),
    ui_path: text('{{base_folder}}/ui/'),
    workspace_prefix_key: text(''),
    // username → plaintext password; empty by default so no login works until one is set.
    simple_user_map_key: z.record(z.string(), text('')).default({}),
    jwt: z
      .object({
        secret_signing_key: text(''),
        expiration_minutes: int(1440, 1),
      })
      .prefault({}),
    license: text('open-source'),
    enable_metrics: bool(true),
    // `/metrics` needs credentials like any API route unless this is true (Prometheus without a key).
    metrics_public: bool(false),
    // Origins allowed to call the API from a browser: a comma-separated list or a YAML list of
    // exact origins (`https://ui.example.com`), or `*` for any origin *without* credentials.
    // Empty (the default): no cross-origin access. `reflect-origin` (older files) means empty.
    cors_allowed_origins: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v.join(',') : v))
      .default(''),
    enabled_auth_api: bool(true),
    auth_api_key: text(''),
    enable_trigger_via_webhook: bool(false),
    event_receiver_url: text(''),
    // osm's own keys (not in the reference).
    max_concurrent_runs: int(availableParallelism(), 1),
    max_body_mb: int(4, 1),
    max_upload_mb: int(512, 1),
    max_snapshot_mb: int(2048, 1),
    // A caller-supplied registry_url (API) may not point at loopback, link-local or private
    // addresses, nor at a local file, unless the operator allows it (SSRF guard, docs/registry.md).
    allow_private_registry: bool(false),
    // The same guard for snapshot import URLs given through the API (the CLI may use any URL).
    allow_private_snapshot_urls: bool(false),
    // Server-side requests made for an API client (http functions in /functions/eval, notification
    // and webhook targets) may not reach loopback, link-local, private or metadata addresses unless
    // the host, IP or CIDR is listed here (docs/security.md, "Outbound requests").
    outbound_allowlist: z.array(z.string()).default([]),
    // Concurrent /functions/eval and /functions/execute evaluations; extra calls get 429.
    max_concurrent_evals: int(3, 1),
  })
  .prefault({});

export const scanTacticSchema = z
  .object({
    aggressive: int(40, 1),
    default: int(10, 1),
    gently: int(5, 1),
  })
  .prefault({});

export const redisSchema = z
  .object({
    host: text(''),
    port: port(6379),
    username: text(''),
    password: text(''),
    db: int(0),
    connection_timeout: int(60),
    /** Key prefix of the distributed queue (BullMQ) and worker registry. */
    prefix: text('osm'),
  })
  .prefault({});

export const globalVarSchema = z
  .object({
    value: text(''),
    as_env: bool(true),
  })
  .prefault({});

export const WEBHOOK_EVENTS = ['workflow_completed', 'workflow_failed', 'workflow_cancelled'] as const;

export const webhookSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: (iss) => (iss.input === undefined ? 'required' : 'must be an http(s) URL') }),
  enabled: bool(false),
  headers: z.record(z.string(), text('')).default({}),
  timeout: int(30, 1),
  retry_count: int(3, 0),
  skip_tls_verify: bool(false),
  // Empty means every event.
  events: z.array(z.enum(WEBHOOK_EVENTS)).default([]),
});

const chatId = z.union([z.number().int(), z.string()]);

export const notificationSchema = z
  .object({
    provider: text('telegram'),
    enabled: bool(false),
    telegram: z
      .object({
        bot_token: text(''),
        chat_id: chatId.default(0),
        enabled: bool(false),
        telegram_channel_map: z.record(z.string(), chatId).default({}),
        // The Bot API endpoint (a local Bot API server, or a test double).
        api_url: text('https://api.telegram.org'),
      })
      .prefault({}),
    webhooks: z.array(webhookSchema).default([]),
  })
  .prefault({});

export const storageSchema = z
  .object({
    provider: z.enum(['s3', 'minio', 'r2', 'gcs', 'spaces', 'oci']).default('s3'),
    endpoint: text(''),
    access_key_id: text(''),
    secret_access_key: text(''),
    bucket: text(''),
    region: text('us-east-1'),
    account_id: text(''),
    use_ssl: bool(true),
    path_style: bool(false),
    presign_expiry: duration('1h'),
    enabled: bool(false),
    // Ours (not in the reference): a key prefix for what osm itself stores (workspaces/<name>/…),
    // how the daemon serves an artifact that only the storage holds (stream through it, or 302
    // to a presigned URL), and whether finished runs upload their artifacts.
    prefix: text(''),
    serve: z.enum(['stream', 'redirect']).default('stream'),
    upload_outputs: bool(false),
  })
  .prefault({});

export const cloudSchema = z
  .object({
    cloud_path: text('{{base_folder}}/cloud'),
    cloud_settings: text('{{base_folder}}/cloud/cloud-settings.yaml'),
    enabled: bool(false),
  })
  .prefault({});

export const llmProviderSchema = z.object({
  provider: text(''),
  base_url: text(''),
  auth_token: text(''),
  model: text(''),
});

export const DEFAULT_LLM_PROVIDER = {
  provider: 'ollama',
  base_url: 'http://localhost:11434/v1/chat/completions',
  auth_token: '',
  model: 'gpt-oss:120b-cloud',
};

export const llmConfigSchema = z
  .object({
    llm_providers: z.array(llmProviderSchema).default([{ ...DEFAULT_LLM_PROVIDER }]),
    enabled_tool_call: bool(false),
    max_tokens: int(1000, 1),
    temperature: z.number().min(0).max(2).default(0.7),
    top_k: int(50, 0),
    top_p: z.number().min(0).max(1).default(0.9),
    n: int(1, 1),
    max_retries: int(3, 0),
    timeout: duration('120s'),
    stream: bool(false),
    structured_json_format: bool(false),
    system_prompt: text(''),
    // "Header-A: v1, Header-B: v2"
    custom_headers: text(''),
    // Price per million tokens by model name, for the cost recorded on agent steps; unknown models cost 0.
    model_costs: z
      .record(z.string(), z.object({ prompt_per_million: z.number().min(0).default(0), completion_per_million: z.number().min(0).default(0) }))
      .default({}),
  })
  .prefault({});

export const acpAgentSchema = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
});

/** Distributed mode (issue 15): the lease of a task on a worker and how many finished jobs BullMQ keeps. */
export const distributedSchema = z
  .object({
    /** A worker that stops renewing its lock loses its task within this many seconds (lock 3/4, renewal and stalled check 1/4). */
    lease_seconds: int(30, 2, 3600),
    /** Finished jobs kept in Redis (for `GET /tasks`); results never depend on them. */
    keep_completed: int(1000, 1),
    keep_failed: int(5000, 1),
    /** Bytes of log and artifact files one run ships from its worker to the master at most (MB); the rest stays on the worker. */
    ship_files_max_mb: int(256, 0, 1_000_000),
  })
  .prefault({});

/**
 * Agent Client Protocol agents (agent-acp steps, run_agent(), POST /agent/chat/completions): name →
 * command. Entries here add to or replace the built-in names (claude-code, codex, gemini, opencode).
 */
export const acpSchema = z
  .object({
    default_agent: text('claude-code'),
    agents: z.record(z.string(), acpAgentSchema).default({}),
  })
  .prefault({});

export const settingsSchema = z.object({
  base_folder: text(''),
  environments: environmentsSchema,
  database: databaseSchema,
  server: serverSchema,
  scan_tactic: scanTacticSchema,
  redis: redisSchema,
  distributed: distributedSchema,
  global_vars: z.record(z.string(), globalVarSchema).default({}),
  notification: notificationSchema,
  storage: storageSchema,
  cloud: cloudSchema,
  llm_config: llmConfigSchema,
  acp: acpSchema,
  /** Target scope (docs/scope.md): global include/exclude, plus per workspace and per org. */
  scope: settingsScopeSchema,
});

export type Settings = z.infer<typeof settingsSchema>;
export type WebhookSettings = z.infer<typeof webhookSchema>;

/** Top-level sections of the settings file, in file order. */
export const SETTINGS_SECTIONS = Object.keys(settingsSchema.shape) as (keyof Settings)[];

/** The settings every field defaulted (what an empty file means). */
export function defaultSettings(): Settings {
  return settingsSchema.parse({});
}
