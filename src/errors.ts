/**
 * The error catalogue. Every error a user or API client can see is created here, with a stable
 * code, an HTTP status and a message. Routes throw these; one fastify error handler maps them to
 * `{ error: true, message }`; the CLI prints `Error: <message>` and sets a non-zero exit code.
 * Library code never calls process.exit().
 */

export class OsmError extends Error {
  readonly code: string;
  readonly status: number;
  /** Extra fields merged into the HTTP error body (rare; e.g. valid_tables). */
  readonly extra?: Record<string, unknown>;
  /** Response headers the HTTP error carries (e.g. `retry-after` of a 429). */
  readonly headers?: Record<string, string>;

  constructor(code: string, status: number, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.name = 'OsmError';
    this.code = code;
    this.status = status;
    if (extra) this.extra = extra;
    if (headers) this.headers = headers;
  }
}

type Factory<A extends unknown[]> = (...args: A) => OsmError;

/** Makes a factory for one catalogue entry (in the style of fastify's lib/errors.js). */
function def<A extends unknown[]>(code: string, status: number, message: (...args: A) => string): Factory<A> {
  return (...args: A) => new OsmError(code, status, message(...args));
}

export const errors = {
  // generic
  badRequest: def('OSM_ERR_BAD_REQUEST', 400, (msg: string) => msg),
  invalidBody: def('OSM_ERR_INVALID_BODY', 400, (detail?: string) => (detail ? `Invalid request body: ${detail}` : 'Invalid request body')),
  validation: def('OSM_ERR_VALIDATION', 400, (msg: string) => msg),
  /** A run target outside the target scope (docs/scope.md); the CLI exits with 2. */
  outOfScope: def('OSM_ERR_OUT_OF_SCOPE', 400, (msg: string) => msg),
  notFound: def('OSM_ERR_NOT_FOUND', 404, (msg: string) => msg),
  routeNotFound: def('OSM_ERR_ROUTE_NOT_FOUND', 404, (method: string, url: string) => `Route ${method}:${url} not found`),
  conflict: def('OSM_ERR_CONFLICT', 409, (msg: string) => msg),
  notAcceptable: def('OSM_ERR_NOT_ACCEPTABLE', 406, (msg: string) => msg),
  payloadTooLarge: def('OSM_ERR_PAYLOAD_TOO_LARGE', 413, (limit?: number) => (limit ? `Request body is too large (limit ${limit} bytes)` : 'Request Entity Too Large')),
  unsupportedMedia: def('OSM_ERR_UNSUPPORTED_MEDIA', 415, (ct: string) => `Unsupported content type: ${ct}`),
  internal: def('OSM_ERR_INTERNAL', 500, (msg?: string) => msg ?? 'Internal server error'),
  unavailable: def('OSM_ERR_UNAVAILABLE', 503, (msg: string) => msg),

  // agents (reference server-api §1.15 wording)
  agentBusy: def('OSM_ERR_AGENT_BUSY', 409, () => 'An agent is already running. Only one agent subprocess is allowed at a time.'),
  agentFailed: def('OSM_ERR_AGENT_FAILED', 500, (msg: string) => `Agent execution failed: ${msg}`),

  // auth (messages word for word from the spec)
  missingAuthHeader: def('OSM_ERR_AUTH_MISSING', 401, () => 'Missing authorization header'),
  invalidAuthFormat: def('OSM_ERR_AUTH_FORMAT', 401, () => 'Invalid authorization header format'),
  invalidToken: def('OSM_ERR_AUTH_TOKEN', 401, () => 'Invalid or expired token'),
  invalidApiKey: def('OSM_ERR_AUTH_API_KEY', 401, () => 'Invalid or missing API key'),
  invalidCredentials: def('OSM_ERR_AUTH_CREDENTIALS', 401, () => 'Invalid credentials'),
  tooManyLogins: (seconds: number) =>
    new OsmError('OSM_ERR_AUTH_THROTTLED', 429, `Too many failed login attempts; try again in ${seconds} s`, undefined, { 'retry-after': String(seconds) }),
  tokenRevoked: def('OSM_ERR_AUTH_TOKEN_REVOKED', 401, (name: string) => `API token '${name}' has been revoked`),
  tokenExpired: def('OSM_ERR_AUTH_TOKEN_EXPIRED', 401, (name: string, at: string) => `API token '${name}' expired at ${at}`),
  workspaceNotAvailable: def('OSM_ERR_WORKSPACE_NOT_AVAILABLE', 409, (name: string) => `Workspace ${name} is not available to this credential (it belongs to another org); choose another workspace name`),
  boundForbidden: def('OSM_ERR_FORBIDDEN_BOUND', 403, () => 'Forbidden: credentials bound to orgs cannot use this route (it acts on the whole server, not on one org)'),
  forbidden: def('OSM_ERR_FORBIDDEN', 403, (need: string, have: string) => `Forbidden: this requires the ${need} role (your credential has the ${have} role)`),
  tokenGeneration: def('OSM_ERR_AUTH_TOKEN_GENERATION', 500, () => 'Failed to generate token (is server.jwt.secret_signing_key set?)'),
  metricsDisabled: def('OSM_ERR_METRICS_DISABLED', 404, () => 'Metrics are disabled (server.enable_metrics: false)'),

  // settings
  settingsInvalid: def('OSM_ERR_SETTINGS_INVALID', 400, (detail: string) => `Invalid YAML configuration: ${detail}`),
  settingsReload: def('OSM_ERR_SETTINGS_RELOAD', 500, (detail: string) => `Failed to reload configuration: ${detail}`),
  settingsKey: def('OSM_ERR_SETTINGS_KEY', 400, (msg: string) => msg),

  // workflows
  workflowNotFound: def('OSM_ERR_WORKFLOW_NOT_FOUND', 404, (name: string, hint?: string) => `workflow not found: ${name}${hint ? `\n${hint}` : ''}`),
  workflowInvalid: def('OSM_ERR_WORKFLOW_INVALID', 400, (msg: string) => msg),

  // runs
  runNotFound: def('OSM_ERR_RUN_NOT_FOUND', 404, () => 'Run not found'),
  jobNotFound: def('OSM_ERR_JOB_NOT_FOUND', 404, () => 'Job not found'),
  invalidTarget: def('OSM_ERR_INVALID_TARGET', 400, (msg: string) => msg),
  requiredParam: def('OSM_ERR_REQUIRED_PARAM', 400, (name: string) => `required parameter missing: ${name}`),
  runState: def('OSM_ERR_RUN_STATE', 400, (msg: string) => msg),
  reservedParam: def('OSM_ERR_RESERVED_PARAM', 400, (name: string) => `params.${name} is a reserved variable name and cannot be set`),
  runWorkflowMissing: def('OSM_ERR_RUN_WORKFLOW_MISSING', 404, (name: string) => `Workflow ${JSON.stringify(name.slice(0, 200))} is not in the workflows folder`),
  workflowNotInstalled: def('OSM_ERR_WORKFLOW_NOT_INSTALLED', 400, (what: string, name: string, file: string, dir: string) => `${what}: the daemon finds workflows by name in ${dir}; '${name}' (${file}) is not the workflow of that name there. Install it in the workflows folder first`),

  // data plane
  vulnNotFound: def('OSM_ERR_VULN_NOT_FOUND', 404, () => 'Vulnerability not found'),
  workspaceRequired: def('OSM_ERR_WORKSPACE_REQUIRED', 400, () => 'Workspace is required'),
  workspaceNotFound: def('OSM_ERR_WORKSPACE_NOT_FOUND', 404, (name: string) => `Workspace not found: ${name}`),
  assetNotFound: def('OSM_ERR_ASSET_NOT_FOUND', 404, () => 'Asset not found'),
  snapshotNotFound: def('OSM_ERR_SNAPSHOT_NOT_FOUND', 404, (name: string) => `Snapshot not found: ${name}`),
  snapshotSourceRequired: def('OSM_ERR_SNAPSHOT_SOURCE', 400, () => 'Either file or url is required'),
  snapshotWorkspaceExists: def('OSM_ERR_SNAPSHOT_WORKSPACE_EXISTS', 409, (name: string, hint: string) => `Failed to import snapshot: workspace already exists: ${name} (use ${hint} to overwrite)`),
  snapshotImport: def('OSM_ERR_SNAPSHOT_IMPORT', 500, (detail: string) => `Failed to import snapshot: ${detail}`),
  scheduleNotFound: def('OSM_ERR_SCHEDULE_NOT_FOUND', 404, () => 'Schedule not found'),
  pathTraversal: def('OSM_ERR_PATH_TRAVERSAL', 400, (what: string) => `Invalid ${what}: path traversal is not allowed`),

  // params and generators (src/workflow/params.ts, generators.ts)
  generatorFailed: def('OSM_ERR_GENERATOR', 400, (param: string, detail: string) => `generator failed for ${param}: ${detail}`),
  invalidParams: def('OSM_ERR_INVALID_PARAMS', 400, (detail: string) => `invalid params: ${detail}`),

  // HTTP API: workflows, runs, uploads (messages word for word from the spec/reference)
  apiWorkflowNotFound: def('OSM_ERR_API_WORKFLOW_NOT_FOUND', 404, () => 'Workflow not found'),
  invalidWorkflowName: def('OSM_ERR_INVALID_WORKFLOW_NAME', 400, () => 'Invalid workflow name'),
  noFileProvided: def('OSM_ERR_NO_FILE', 400, () => 'No file provided'),
  workflowUploadExtension: def('OSM_ERR_WORKFLOW_UPLOAD_EXT', 400, () => 'Only YAML files (.yaml or .yml) are allowed'),
  workflowUploadYaml: def('OSM_ERR_WORKFLOW_UPLOAD_YAML', 400, (detail: string) => `Invalid workflow YAML: ${detail}`),
  workflowUploadInvalid: def('OSM_ERR_WORKFLOW_UPLOAD_INVALID', 400, (detail: string) => `Workflow validation failed: ${detail}`),
  workflowFileExists: def('OSM_ERR_WORKFLOW_FILE_EXISTS', 409, (name: string) => `Workflow file already exists: ${name} (use force=true to overwrite)`),
  flowOrModuleRequired: def('OSM_ERR_FLOW_OR_MODULE', 400, () => "Either 'flow' or 'module' is required"),
  invalidPriority: def('OSM_ERR_INVALID_PRIORITY', 400, () => 'Invalid priority. Must be one of: low, normal, high, critical'),
  invalidTargetFile: def('OSM_ERR_INVALID_TARGET_FILE', 400, (detail: string) => `Invalid target_file: ${detail}`),
  cannotCancelRun: def('OSM_ERR_CANNOT_CANCEL', 400, (status: string) => `Cannot cancel run with status '${status}'`),
  cannotStartRun: def('OSM_ERR_CANNOT_START', 400, (status: string) => `Cannot start run with status '${status}'. Only runs with 'pending' status can be started.`),
  workflowNameTaken: def('OSM_ERR_WORKFLOW_NAME_TAKEN', 409, (name: string, file: string) => `Workflow '${name}' is already defined in ${file}`),
  uploadTooLarge: def('OSM_ERR_UPLOAD_TOO_LARGE', 413, (limitMb: number) => `File is too large (limit ${limitMb} MB)`),
  // settings, workspaces, functions, LLM, schedules, events (src/services/{settings,workspaces,functions,schedules,events}.ts)
  invalidCron: def('OSM_ERR_INVALID_CRON', 400, (detail: string) => `Invalid cron expression: ${detail}`),
  topicRequired: def('OSM_ERR_TOPIC_REQUIRED', 400, () => 'Topic is required'),
  scriptRequired: def('OSM_ERR_SCRIPT_REQUIRED', 400, () => 'script is required'),
  expressionRequired: def('OSM_ERR_EXPRESSION_REQUIRED', 400, () => 'expression is required'),
  templateFailed: def('OSM_ERR_TEMPLATE_FAILED', 400, (detail: string) => `Template rendering failed: ${detail}`),
  executionFailed: def('OSM_ERR_EXECUTION_FAILED', 400, (detail: string) => `Execution failed: ${detail}`),
  tooManyEvals: def('OSM_ERR_TOO_MANY_EVALS', 429, (limit: number) => `Too many concurrent evaluations (limit ${limit}, set by server.max_concurrent_evals); retry later`),
  evaluatorUnavailable: def('OSM_ERR_EVALUATOR_UNAVAILABLE', 503, (detail: string) => `Script evaluator unavailable: ${detail}`),
  functionCategoryNotFound: def('OSM_ERR_FUNCTION_CATEGORY', 404, (category: string) => `Function category not found: ${category}`),
  invalidWorkspaceName: def('OSM_ERR_INVALID_WORKSPACE_NAME', 400, () => 'Invalid workspace name'),
  invalidStateFile: def('OSM_ERR_INVALID_STATE_FILE', 400, (allowed: string) => `state_file must be one of: ${allowed}`),
  stateFileNotFound: def('OSM_ERR_STATE_FILE_NOT_FOUND', 404, (file: string) => `State file not found: ${file}`),
  workspaceBusy: def('OSM_ERR_WORKSPACE_BUSY', 409, (name: string, n: number) => `Workspace ${name} has ${n} active run(s); cancel them before deleting it`),
  streamingUnsupported: def('OSM_ERR_STREAMING_UNSUPPORTED', 400, () => 'Streaming is not supported'),
  watchPathOutside: def('OSM_ERR_WATCH_PATH', 400, (path: string) => `watch_path must be inside the base folder or the data folder: ${path}`),
  scheduleInvalid: def('OSM_ERR_SCHEDULE_INVALID', 400, (msg: string) => msg),
  // data plane: assets, vulnerabilities, diffs, snapshots (src/services/{assets,vulns,diffs,snapshots}.ts, src/snapshot/)
  invalidAssetId: def('OSM_ERR_INVALID_ASSET_ID', 400, () => 'Invalid asset ID'),
  invalidVulnId: def('OSM_ERR_INVALID_VULN_ID', 400, () => 'Invalid vulnerability ID'),
  invalidSeverity: def('OSM_ERR_INVALID_SEVERITY', 400, (value: string) => `Invalid severity: ${value} (use critical, high, medium, low or info)`),
  workspaceParamRequired: def('OSM_ERR_WORKSPACE_PARAM', 400, () => 'workspace parameter is required'),
  fromParamRequired: def('OSM_ERR_FROM_PARAM', 400, () => 'from parameter is required'),
  invalidTimeFormat: def('OSM_ERR_TIME_FORMAT', 400, (which: string) => `invalid ${which} time format: use RFC3339, Unix timestamp, YYYY-MM-DD or "YYYY-MM-DD HH:MM:SS"`),
  workspaceNameRequired: def('OSM_ERR_WORKSPACE_NAME_REQUIRED', 400, () => 'Workspace name is required'),
  invalidSnapshotName: def('OSM_ERR_INVALID_SNAPSHOT_NAME', 400, () => 'Invalid snapshot name'),
  snapshotRejected: def('OSM_ERR_SNAPSHOT_REJECTED', 400, (detail: string) => `Failed to import snapshot: ${detail}`),
  snapshotExport: def('OSM_ERR_SNAPSHOT_EXPORT', 500, (detail: string) => `Failed to create snapshot: ${detail}`),
  importTooManyRecords: def('OSM_ERR_IMPORT_TOO_MANY', 400, (max: number) => `data: at most ${max} records per request`),
  importFileNotFound: def('OSM_ERR_IMPORT_FILE', 404, (path: string) => `Import file not found: ${path}`),
  // one daemon per base folder (src/util/daemon-lock.ts)
  daemonRunning: def('OSM_ERR_DAEMON_RUNNING', 409, (pid: number, lockFile: string, base: string) =>
    `another osm daemon (PID ${pid}) is already serving the base folder ${base} (lock file ${lockFile}); stop it first, or give this one another base folder (-b). --force does not replace a running daemon`),
  daemonLockUnknown: def('OSM_ERR_DAEMON_LOCK', 409, (lockFile: string, owner: string) =>
    `the base folder is locked by ${owner} (lock file ${lockFile}); if no daemon is serving it, start with --force to take the lock over`),
  unknownImportTool: def('OSM_ERR_IMPORT_TOOL', 400, (tool: string, supported: string) => `unknown tool '${tool}': supported tools are ${supported}`),
  reportFormat: def('OSM_ERR_REPORT_FORMAT', 400, (format: string) => `unknown report format '${format}': use html, md or json`),
  // distributed mode (src/distributed/, src/server/routes/distributed.ts)
  redisNotConfigured: def('OSM_ERR_REDIS_NOT_CONFIGURED', 400, () => 'redis not configured. Add redis section to osm-settings.yaml or use --redis-url'),
  invalidRedisUrl: def('OSM_ERR_INVALID_REDIS_URL', 400, (detail: string) => `invalid Redis URL: ${detail}`),
  redisUnavailable: def('OSM_ERR_REDIS_UNAVAILABLE', 503, (where: string, detail: string) => `cannot reach Redis at ${where}: ${detail}`),
  distributedRequiresMaster: def('OSM_ERR_DISTRIBUTED_NO_MASTER', 400, () => 'Distributed mode requires the server to be started with --master flag'),
  distributedQueueFailed: def('OSM_ERR_DISTRIBUTED_QUEUE', 503, (detail: string) => `failed to submit to distributed queue: ${detail}`),
  taskNotFound: def('OSM_ERR_TASK_NOT_FOUND', 404, (id: string) => `task not found: ${id}`),
  workerNotFound: def('OSM_ERR_WORKER_NOT_FOUND', 404, () => 'Worker not found'),
  workerNameTaken: def('OSM_ERR_WORKER_NAME_TAKEN', 409, (name: string) => `worker name already in use by a live worker: ${name} (choose another --name)`),
  invalidWorkerName: def('OSM_ERR_INVALID_WORKER_NAME', 400, (name: string) => `invalid worker name: ${JSON.stringify(name)} (letters, digits, ".", "_" and "-" only, at most 64)`),
  // registry and installation (src/services/registry.ts, src/registry/)
  registryLoad: def('OSM_ERR_REGISTRY_LOAD', 500, (detail: string) => `Failed to load registry: ${detail}`),
  registryRefused: def('OSM_ERR_REGISTRY_REFUSED', 400, (detail: string) => `Failed to load registry: ${detail}`),
  registryMode: def('OSM_ERR_REGISTRY_MODE', 400, () => "registry_mode must be 'direct-fetch' or 'nix-build'"),
  installMethod: def('OSM_ERR_INSTALL_METHOD', 400, () => "method must be 'direct' or 'nix'"),
  installType: def('OSM_ERR_INSTALL_TYPE', 400, () => "type must be 'binary' or 'workflow'"),
  installNamesRequired: def('OSM_ERR_INSTALL_NAMES', 400, () => 'names array is required for binary installation (or set install_all=true)'),
  installNameRequired: def('OSM_ERR_INSTALL_NAME', 400, () => 'name is required'),
  invalidBinaryName: def('OSM_ERR_INVALID_BINARY_NAME', 400, (name: string) => `Invalid binary name: ${name}`),
  nixNotInstalled: def('OSM_ERR_NIX_MISSING', 400, () => 'Nix is not installed. Install Nix first or use registry_mode=direct-fetch'),
  workflowSourceRequired: def('OSM_ERR_WORKFLOW_SOURCE', 400, () => 'source is required for workflow installation (git URL, zip URL, or local path)'),
  workflowInstall: def('OSM_ERR_WORKFLOW_INSTALL', 500, (detail: string) => `Failed to install workflow: ${detail}`),
  // webhook-triggered runs (src/services/webhook-runs.ts; messages word for word from the reference)
  webhookNotFound: def('OSM_ERR_WEBHOOK_NOT_FOUND', 404, () => 'Webhook not found'),
  webhookKey: def('OSM_ERR_WEBHOOK_KEY', 401, () => 'Invalid or missing authentication key'),
  webhookWorkflowNotFound: def('OSM_ERR_WEBHOOK_WORKFLOW', 404, (name: string) => `Workflow '${name}' not found`),
  // organizations (src/services/orgs.ts; messages as in the reference)
  orgNotFound: def('OSM_ERR_ORG_NOT_FOUND', 404, (ref: string) => `org not found: ${ref}`),
  orgFilterNotFound: def('OSM_ERR_ORG_FILTER', 400, (ref: string) => `org not found: ${ref}`),
  defaultOrgProtected: def('OSM_ERR_DEFAULT_ORG', 403, () => 'the default org cannot be deleted or renamed'),
  orgNameRequired: def('OSM_ERR_ORG_NAME_REQUIRED', 400, () => 'name is required'),
  orgInvalidBody: def('OSM_ERR_ORG_INVALID_BODY', 400, (detail: string) => `invalid request body: ${detail}`),
  orgCreateFailed: def('OSM_ERR_ORG_CREATE', 400, (name: string, detail: string) => `failed to create org "${name}": ${detail}`),
  orgNameTaken: def('OSM_ERR_ORG_NAME_TAKEN', 409, (name: string) => `an org named "${name}" already exists`),
  orgBusy: def('OSM_ERR_ORG_BUSY', 409, (name: string, n: number) => `org ${name} has ${n} active run(s); cancel them before purging it`),
  // team access: users, tokens, audit (src/services/{users,tokens,audit}.ts)
  userNotFound: def('OSM_ERR_USER_NOT_FOUND', 404, (name: string) => `User not found: ${name}`),
  userExists: def('OSM_ERR_USER_EXISTS', 409, (name: string) => `User already exists: ${name}`),
  userNameTaken: def('OSM_ERR_USER_NAME_TAKEN', 409, (name: string) => `${name} is a login of the settings file (server.simple_user_map_key); choose another name`),
  invalidUserName: def('OSM_ERR_INVALID_USER_NAME', 400, (name: string) => `Invalid user name: ${JSON.stringify(name)} (letters, digits, ".", "_", "@" and "-", 1-64 characters)`),
  invalidRole: def('OSM_ERR_INVALID_ROLE', 400, (role: string) => `Invalid role: ${JSON.stringify(role)} (use viewer, operator or admin)`),
  weakPassword: def('OSM_ERR_WEAK_PASSWORD', 400, (why: string) => `Password refused: ${why}`),
  tokenNotFound: def('OSM_ERR_TOKEN_NOT_FOUND', 404, (ref: string) => `API token not found: ${ref}`),
  tokenNameTaken: def('OSM_ERR_TOKEN_NAME_TAKEN', 409, (name: string) => `An API token named ${JSON.stringify(name)} already exists (revoke it first)`),
  invalidTokenName: def('OSM_ERR_INVALID_TOKEN_NAME', 400, (name: string) => `Invalid token name: ${JSON.stringify(name)} (letters, digits, ".", "_" and "-", 1-64 characters)`),
  invalidExpiry: def('OSM_ERR_INVALID_EXPIRY', 400, (value: string) => `Invalid expiry: ${JSON.stringify(value)} (a duration such as 30d, 12h, 45m, 3600s, or never)`),
  lastAdmin: def('OSM_ERR_LAST_ADMIN', 409, () => 'This would leave no way to administer the server (no admin user, API key or settings login); keep at least one'),
  // object storage (src/storage/, osm storage, cdn_* functions)
  storageDisabled: def('OSM_ERR_STORAGE_DISABLED', 400, () => 'storage is not enabled: set storage.enabled and the bucket in osm-settings.yaml'),
  storageConfig: def('OSM_ERR_STORAGE_CONFIG', 400, (detail: string) => `storage settings: ${detail}`),
  storageKey: def('OSM_ERR_STORAGE_KEY', 400, (detail: string) => `refused storage key: ${detail}`),
  storageNotFound: def('OSM_ERR_STORAGE_NOT_FOUND', 404, (key: string) => `not found in storage: ${key}`),
  storageFailed: def('OSM_ERR_STORAGE', 502, (detail: string) => `storage request failed: ${detail}`),
  // URLs the router cannot take apart (src/server/plugins/errors.ts frameworkErrors)
  badUrl: def('OSM_ERR_BAD_URL', 400, () => 'Malformed URL: invalid percent-encoding in the path'),
  paramTooLong: def('OSM_ERR_PARAM_TOO_LONG', 414, (max: number) => `URI Too Long: a path parameter is longer than ${max} characters`),
  malformedMultipart: def('OSM_ERR_MALFORMED_MULTIPART', 400, (detail: string) => `Malformed multipart body: ${detail}`),
  malformedHttp: def('OSM_ERR_MALFORMED_HTTP', 400, () => 'Malformed HTTP request'),
  requestTimeout: def('OSM_ERR_REQUEST_TIMEOUT', 408, () => 'Request timeout'),
  headersTooLarge: def('OSM_ERR_HEADERS_TOO_LARGE', 431, () => 'Request headers are too large'),
  // the web dashboard (src/server/plugins/ui.ts, csrf.ts)
  dashboardNotBuilt: def('OSM_ERR_DASHBOARD_NOT_BUILT', 404, () => 'The web dashboard is not built (run npm run build), and server.ui_path holds no index.html'),
  csrfHeaderMissing: def('OSM_ERR_CSRF', 403, () => 'Forbidden: a request authenticated by the session cookie must carry the x-osm-csrf header'),
  crossSiteRequest: def('OSM_ERR_CROSS_SITE', 403, () => 'Forbidden: cross-site request refused (send the x-osm-csrf header or credentials in a header)'),
} as const;

/** True for errors of the catalogue. */
export function isOsmError(err: unknown): err is OsmError {
  return err instanceof OsmError;
}

/** A short human message for any thrown value (never a stack trace). */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
