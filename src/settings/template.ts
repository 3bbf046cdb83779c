/**
 * The settings file written on first use: the layout and comments of the reference template
 * (server-api §9.1), values taken from the schema's defaults, and fresh random secrets — never a
 * fixed default credential.
 */
import { randomInt } from 'node:crypto';
import { defaultSettings, DEFAULT_LLM_PROVIDER } from './schema.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A random `[a-zA-Z0-9]` string of `length` characters (crypto.randomInt, no modulo bias). */
export function randomSecret(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(0, ALPHABET.length)];
  return out;
}

/** Lengths of the secrets generated for a new settings file (same as the reference). */
export const SECRET_LENGTHS = { auth_api_key: 32, secret_signing_key: 64, user_password: 12, workspace_prefix_key: 16 } as const;

// JSON strings are valid YAML double-quoted scalars, so this quotes any text safely.
const q = (v: string) => JSON.stringify(v);

/** The settings template with fresh random secrets for `baseFolder`. */
export function generateSettingsText(baseFolder: string): string {
  const d = defaultSettings();
  const e = d.environments;
  const s = d.server;
  const db = d.database;
  const r = d.redis;
  const st = d.storage;
  const l = d.llm_config;
  const p = DEFAULT_LLM_PROVIDER;
  return `# osm settings — created on first use. Secrets below were generated randomly for this
# installation; keep this file private (mode 0600). Edit with \`osm config set <key> <value>\`.
base_folder: ${q(baseFolder)}

# Paths may use {{base_folder}}, $ENV_VARS and ~. Relative paths are relative to base_folder.
environments:
  external_binaries_path: ${q(e.external_binaries_path)}
  external_data: ${q(e.external_data)}   # uploads go to <external_data>/uploads
  external_configs: ${q(e.external_configs)}
  # Kept under the base folder (the reference uses $HOME/workspaces-osmedeus).
  workspaces: ${q(e.workspaces)}
  workflows: ${q(e.workflows)}
  snapshot: ${q(e.snapshot)}
  markdown_report_templates: ${q(e.markdown_report_templates)}
  external_agent_configs: ${q(e.external_agent_configs)}
  external_scripts: ${q(e.external_scripts)}

database:
  db_engine: ${db.db_engine}                        # sqlite | postgresql
  db_path: ${q(db.db_path)}
  # PostgreSQL connection (only when db_engine is postgresql)
  host: ${q(db.host)}
  port: ${db.port}
  username: ${q(db.username)}
  password: ${q(db.password)}
  db_name: ${q(db.db_name)}
  connection_timeout: ${db.connection_timeout}
  ssl_mode: ${q(db.ssl_mode)}                # disable | allow | prefer | require | verify-ca | verify-full
  # Or one URL instead of the fields above (OSM_DATABASE_URL overrides it): postgres://user:password@host:5432/db
  url: ""

server:
  # Loopback only by default; "0.0.0.0" listens on every interface (osm serve then prints a warning).
  host: ${q(s.host)}
  port: ${s.port}
  ui_path: ${q(s.ui_path)}
  workspace_prefix_key: ${q(randomSecret(SECRET_LENGTHS.workspace_prefix_key))}
  # username: password (plaintext) for POST /osm/api/login
  simple_user_map_key:
    osmedeus: ${q(randomSecret(SECRET_LENGTHS.user_password))}
  jwt:
    secret_signing_key: ${q(randomSecret(SECRET_LENGTHS.secret_signing_key))}
    expiration_minutes: ${s.jwt.expiration_minutes}
  license: ${q(s.license)}
  enable_metrics: ${s.enable_metrics}
  # /metrics needs credentials unless metrics_public is true.
  metrics_public: ${s.metrics_public}
  # Browser origins allowed to call the API (comma list or YAML list); empty = none, "*" = any origin without credentials.
  cors_allowed_origins: ${q(s.cors_allowed_origins)}
  # API key authentication (header x-osm-api-key)
  enabled_auth_api: ${s.enabled_auth_api}
  auth_api_key: ${q(randomSecret(SECRET_LENGTHS.auth_api_key))}
  enable_trigger_via_webhook: ${s.enable_trigger_via_webhook}
  # event_receiver_url: "http://127.0.0.1:${s.port}"
  # Concurrent runs default to the number of CPU cores.
  # max_concurrent_runs: 4
  max_body_mb: ${s.max_body_mb}
  max_upload_mb: ${s.max_upload_mb}
  max_snapshot_mb: ${s.max_snapshot_mb}
  # Let API clients point registry-info/install at loopback or private addresses (SSRF guard).
  allow_private_registry: false
  # The same guard for snapshot import URLs given through the API.
  allow_private_snapshot_urls: false
  # Hosts, IPs or CIDRs that server-side requests made for API clients may reach even though they
  # are loopback/private (functions/eval http calls, notification and webhook targets).
  outbound_allowlist: []
  # Concurrent /functions/eval evaluations (each runs off the main thread); extra ones get 429.
  max_concurrent_evals: ${s.max_concurrent_evals}

scan_tactic:
  aggressive: ${d.scan_tactic.aggressive}
  default: ${d.scan_tactic.default}
  gently: ${d.scan_tactic.gently}

# Distributed mode (empty host = disabled)
redis:
  host: ${q(r.host)}
  port: ${r.port}
  username: ${q(r.username)}
  password: ${q(r.password)}
  db: ${r.db}
  connection_timeout: ${r.connection_timeout}

# Exposed to workflows as {{NAME}}; exported to the environment when as_env is true and value non-empty.
global_vars:
  GITHUB_API_KEY:
    value: ""
    as_env: true
  SHODAN_API_KEY:
    value: ""
    as_env: true
  CENSYS_API_KEY:
    value: ""
    as_env: true
  PASSIVETOTAL_API_KEY:
    value: ""
    as_env: true

notification:
  provider: ${q(d.notification.provider)}
  enabled: ${d.notification.enabled}
  telegram:
    bot_token: ""
    chat_id: 0
    enabled: false
    # telegram_channel_map: { alerts: -1001234567890 }   # for notify_telegram_channel()
    # api_url: "https://api.telegram.org"
  # webhooks:
  #   - url: "https://hooks.example.com/osm"
  #     enabled: true
  #     headers: {Authorization: "Bearer ..."}
  #     timeout: 30
  #     retry_count: 3
  #     skip_tls_verify: false
  #     events: [workflow_completed, workflow_failed]   # empty = all events
  webhooks: []

# S3-compatible object storage: s3 | minio | r2 | gcs | spaces | oci
storage:
  provider: ${st.provider}
  endpoint: ${q(st.endpoint)}
  access_key_id: ${q(st.access_key_id)}
  secret_access_key: ${q(st.secret_access_key)}
  bucket: ${q(st.bucket)}
  region: ${q(st.region)}
  account_id: ${q(st.account_id)}
  use_ssl: ${st.use_ssl}
  path_style: ${st.path_style}
  presign_expiry: ${q(st.presign_expiry)}
  enabled: ${st.enabled}
  prefix: ${q(st.prefix)}               # key prefix of what osm stores itself (workspaces/<name>/…)
  serve: ${st.serve}                 # artifacts only in storage: stream (through the daemon) | redirect (302 to a presigned URL)
  upload_outputs: ${st.upload_outputs}        # upload each finished run's artifacts to workspaces/<workspace>/<path>

cloud:
  cloud_path: ${q(d.cloud.cloud_path)}
  cloud_settings: ${q(d.cloud.cloud_settings)}
  enabled: ${d.cloud.enabled}

llm_config:
  llm_providers:
    - provider: ${q(p.provider)}
      base_url: ${q(p.base_url)}
      auth_token: ""
      model: ${q(p.model)}
  enabled_tool_call: ${l.enabled_tool_call}
  max_tokens: ${l.max_tokens}
  temperature: ${l.temperature}
  top_k: ${l.top_k}
  top_p: ${l.top_p}
  n: ${l.n}
  max_retries: ${l.max_retries}
  timeout: ${q(l.timeout)}
  stream: ${l.stream}
  structured_json_format: ${l.structured_json_format}
  system_prompt: ""
  custom_headers: ""   # "Header-A: v1, Header-B: v2"
  # Price per million tokens by model, for the cost recorded on agent steps (unknown models cost 0):
  # model_costs:
  #   gpt-4o-mini: { prompt_per_million: 0.15, completion_per_million: 0.6 }
  model_costs: {}

# Agent Client Protocol agents for agent-acp steps, run_agent() and POST /osm/api/agent/chat/completions.
# Built in: claude-code (claude-code-acp), codex (codex-acp), gemini (gemini --experimental-acp),
# opencode (opencode acp); entries here add names or replace those commands.
acp:
  default_agent: ${q(d.acp.default_agent)}
  agents: {}
  #   my-agent: { command: "my-acp-agent", args: ["--stdio"], env: { MY_API_KEY: "..." } }

# Target scope enforced by the engine (docs/scope.md): targets out of scope are refused, foreach
# items and imported rows out of scope are dropped and counted. Empty lists: no restriction.
# Workspace and org scopes narrow it further for runs and imports of that workspace / org.
scope:
  include: []      # e.g. ["*.example.com", "example.com", "10.0.0.0/8"]
  exclude: []      # e.g. ["admin.example.com", "10.0.0.1"]
  workspaces: {}   # e.g. { example.com: { include: [".example.com"] } }
  orgs: {}
`;
}
