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

  constructor(code: string, status: number, message: string, extra?: Record<string, unknown>) {
    super(message);
    this.name = 'OsmError';
    this.code = code;
    this.status = status;
    if (extra) this.extra = extra;
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
  notFound: def('OSM_ERR_NOT_FOUND', 404, (msg: string) => msg),
  routeNotFound: def('OSM_ERR_ROUTE_NOT_FOUND', 404, (method: string, url: string) => `Route ${method}:${url} not found`),
  conflict: def('OSM_ERR_CONFLICT', 409, (msg: string) => msg),
  payloadTooLarge: def('OSM_ERR_PAYLOAD_TOO_LARGE', 413, (limit?: number) => (limit ? `Request body is too large (limit ${limit} bytes)` : 'Request Entity Too Large')),
  unsupportedMedia: def('OSM_ERR_UNSUPPORTED_MEDIA', 415, (ct: string) => `Unsupported content type: ${ct}`),
  internal: def('OSM_ERR_INTERNAL', 500, (msg?: string) => msg ?? 'Internal server error'),
  unavailable: def('OSM_ERR_UNAVAILABLE', 503, (msg: string) => msg),

  // auth (messages word for word from the spec)
  missingAuthHeader: def('OSM_ERR_AUTH_MISSING', 401, () => 'Missing authorization header'),
  invalidAuthFormat: def('OSM_ERR_AUTH_FORMAT', 401, () => 'Invalid authorization header format'),
  invalidToken: def('OSM_ERR_AUTH_TOKEN', 401, () => 'Invalid or expired token'),
  invalidApiKey: def('OSM_ERR_AUTH_API_KEY', 401, () => 'Invalid or missing API key'),
  invalidCredentials: def('OSM_ERR_AUTH_CREDENTIALS', 401, () => 'Invalid credentials'),

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

  // data plane
  vulnNotFound: def('OSM_ERR_VULN_NOT_FOUND', 404, () => 'Vulnerability not found'),
  workspaceRequired: def('OSM_ERR_WORKSPACE_REQUIRED', 400, () => 'Workspace is required'),
  workspaceNotFound: def('OSM_ERR_WORKSPACE_NOT_FOUND', 404, (name: string) => `Workspace not found: ${name}`),
  assetNotFound: def('OSM_ERR_ASSET_NOT_FOUND', 404, () => 'Asset not found'),
  snapshotNotFound: def('OSM_ERR_SNAPSHOT_NOT_FOUND', 404, (name: string) => `Snapshot not found: ${name}`),
  snapshotSourceRequired: def('OSM_ERR_SNAPSHOT_SOURCE', 400, () => 'Either file or url is required'),
  snapshotImport: def('OSM_ERR_SNAPSHOT_IMPORT', 500, (detail: string) => `Failed to import snapshot: ${detail}`),
  scheduleNotFound: def('OSM_ERR_SCHEDULE_NOT_FOUND', 404, () => 'Schedule not found'),
  pathTraversal: def('OSM_ERR_PATH_TRAVERSAL', 400, (what: string) => `Invalid ${what}: path traversal is not allowed`),
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
