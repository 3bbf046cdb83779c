/**
 * Who may call each route: the one table of the API's access rules (issue "Team access"). Keys are
 * `METHOD url-pattern` exactly as registered; HEAD follows its GET. A route missing from this table
 * needs the admin role (deny by default) and fails test/server/access-matrix.test.ts.
 *
 * - public: no credentials (the spec's list, plus docs and the keyed webhook trigger);
 * - viewer: read runs, steps, logs, assets, vulnerabilities, workspaces, workflows, schedules, stats;
 * - operator: viewer + start/cancel/resume/duplicate runs of installed workflows, manage schedules,
 *   upload target files, export snapshots, triage findings;
 * - admin: everything, including code execution (functions), workflow upload, installs, settings,
 *   snapshot import, users, tokens, orgs, database cleanup and the audit log.
 */
import type { Role } from '../auth/roles.js';

export type Access = 'public' | Role;

export const ROUTE_ACCESS: Readonly<Record<string, Access>> = {
  // health, docs, auth
  'GET /health': 'public',
  'GET /health/ready': 'public',
  'GET /server-info': 'public',
  'GET /status': 'public',
  'GET /api/info': 'public',
  'GET /osm/api/health': 'public',
  'GET /openapi.json': 'public',
  'GET /swagger': 'public',
  'GET /swagger/': 'public',
  'GET /swagger/index.html': 'public',
  'GET /swagger/assets/:file': 'public',
  'GET /favicon.ico': 'public',
  'POST /osm/api/login': 'public',
  'POST /osm/api/logout': 'public',
  'GET /metrics': 'viewer',
  // CORS preflight route of @fastify/cors (allowed preflights are answered before authentication)
  'OPTIONS *': 'viewer',

  // workflows
  'GET /osm/api/workflows': 'viewer',
  'GET /osm/api/workflows/tags': 'viewer',
  'GET /osm/api/workflows/:name': 'viewer',
  'GET /osm/api/workflows/:name/lint': 'viewer',
  'POST /osm/api/workflows/refresh': 'operator',
  'POST /osm/api/workflow-upload': 'admin',

  // runs and jobs
  'POST /osm/api/runs': 'operator',
  'GET /osm/api/runs': 'viewer',
  'GET /osm/api/runs/:id': 'viewer',
  'DELETE /osm/api/runs/:id': 'operator',
  'POST /osm/api/runs/:id/cancel': 'operator',
  'POST /osm/api/runs/:id/duplicate': 'operator',
  'POST /osm/api/runs/:id/start': 'operator',
  'POST /osm/api/runs/:id/resume': 'operator',
  'GET /osm/api/runs/:id/steps': 'viewer',
  'GET /osm/api/runs/:id/artifacts': 'viewer',
  'GET /osm/api/runs/:id/logs': 'viewer',
  'GET /osm/api/jobs/:job_id': 'viewer',
  'GET /osm/api/step-results': 'viewer',

  // events
  'GET /osm/api/event-logs': 'viewer',
  'GET /osm/api/events': 'viewer',
  'GET /osm/api/events/stream': 'viewer',
  'POST /osm/api/events/emit': 'operator',
  'GET /osm/api/event-receiver/status': 'viewer',
  'GET /osm/api/event-receiver/workflows': 'viewer',

  'GET /osm/api/stats': 'viewer',
  'POST /osm/api/upload-file': 'operator',

  // settings: admin only (the file holds every secret and decides what runs)
  'GET /osm/api/settings/yaml': 'admin',
  'GET /osm/api/settings/yaml/': 'admin',
  'PUT /osm/api/settings/yaml': 'admin',
  'POST /osm/api/settings/reload': 'admin',
  'GET /osm/api/settings/status': 'admin',

  // workspaces
  'GET /osm/api/workspaces': 'viewer',
  'GET /osm/api/workspaces/:name': 'viewer',
  'DELETE /osm/api/workspaces/:name': 'admin',
  'GET /osm/api/workspaces/:name/state-file': 'viewer',
  'GET /osm/api/workspace-names': 'viewer',

  // functions: evaluating a script runs code on the host
  'POST /osm/api/functions/eval': 'admin',
  'POST /osm/api/functions/execute': 'admin',
  'GET /osm/api/functions/list': 'viewer',
  'GET /osm/api/functions': 'viewer',

  // LLM proxy (spends the provider's quota)
  'POST /osm/api/llm/v1/chat/completions': 'operator',
  'POST /osm/api/llm/chat/completions': 'operator',
  'POST /osm/api/llm/v1/embeddings': 'operator',
  'POST /osm/api/llm/embeddings': 'operator',

  // ACP agent: a coding agent has tools of its own (commands, files), so this is code execution
  'POST /osm/api/agent/chat/completions': 'admin',

  // schedules
  'GET /osm/api/schedules': 'viewer',
  'POST /osm/api/schedules': 'operator',
  'GET /osm/api/schedules/:id': 'viewer',
  'PUT /osm/api/schedules/:id': 'operator',
  'DELETE /osm/api/schedules/:id': 'operator',
  'POST /osm/api/schedules/:id/enable': 'operator',
  'POST /osm/api/schedules/:id/disable': 'operator',
  'POST /osm/api/schedules/:id/trigger': 'operator',

  // assets and vulnerabilities
  'GET /osm/api/assets': 'viewer',
  'GET /osm/api/assets/diff': 'viewer',
  'GET /osm/api/assets/diffs': 'viewer',
  'GET /osm/api/assets/:id': 'viewer',
  'GET /osm/api/asset-stats': 'viewer',
  'GET /osm/api/vulnerabilities': 'viewer',
  'GET /osm/api/vulnerabilities/summary': 'viewer',
  'GET /osm/api/vulnerabilities/diff': 'viewer',
  'GET /osm/api/vulnerabilities/diffs': 'viewer',
  'GET /osm/api/vulnerabilities/:id': 'viewer',
  'POST /osm/api/vulnerabilities': 'operator',
  'DELETE /osm/api/vulnerabilities/:id': 'operator',
  'POST /osm/api/vulnerabilities/import': 'operator',

  // artifacts
  'GET /osm/api/artifacts': 'viewer',
  'GET /osm/api/artifacts/:workspace_name': 'viewer',

  // snapshots: exporting is an operator's job; importing writes rows and files from an archive
  'GET /osm/api/snapshots': 'operator',
  'POST /osm/api/snapshots/export': 'operator',
  'GET /osm/api/snapshots/download/:name': 'operator',
  'GET /osm/api/snapshot-download/:workspace': 'operator',
  'DELETE /osm/api/snapshots/:name': 'operator',
  'POST /osm/api/snapshots/import': 'admin',

  // registry and installs (download and run installers)
  'GET /osm/api/registry-info': 'viewer',
  'POST /osm/api/registry-install': 'admin',
  'GET /osm/api/install/registry': 'viewer',
  'GET /osm/api/install/status/:binary_name': 'viewer',
  'POST /osm/api/install/binary': 'admin',
  'POST /osm/api/install': 'admin',

  // distributed mode
  'GET /osm/api/workers': 'viewer',
  'GET /osm/api/workers/:id': 'viewer',
  'POST /osm/api/workers/:id/drain': 'operator',
  'GET /osm/api/tasks': 'viewer',
  'GET /osm/api/tasks/:id': 'viewer',
  'POST /osm/api/tasks': 'operator',

  // webhook-triggered runs: the trigger is public and checks the template's own key
  'POST /osm/api/webhook-runs/:uuid/trigger': 'public',
  'GET /osm/api/webhook-runs/:uuid/trigger': 'public',
  'GET /osm/api/webhook-runs/list': 'operator',
  'DELETE /osm/api/webhook-runs/:uuid': 'operator',

  // database maintenance
  'GET /osm/api/database/tables': 'admin',
  'POST /osm/api/database/tables/:table/clear': 'admin',

  // organizations: reading is filtered to the caller's orgs; managing them is admin work
  'GET /osm/api/orgs': 'viewer',
  'GET /osm/api/orgs/:uuid': 'viewer',
  'GET /osm/api/orgs/:uuid/stats': 'viewer',
  'POST /osm/api/orgs': 'admin',
  'PUT /osm/api/orgs/:uuid': 'admin',
  'DELETE /osm/api/orgs/:uuid': 'admin',

  // team access
  'GET /osm/api/users': 'admin',
  'POST /osm/api/users': 'admin',
  'GET /osm/api/users/:username': 'admin',
  'PUT /osm/api/users/:username': 'admin',
  'DELETE /osm/api/users/:username': 'admin',
  'GET /osm/api/tokens': 'admin',
  'POST /osm/api/tokens': 'admin',
  'DELETE /osm/api/tokens/:id': 'admin',
  'GET /osm/api/audit': 'admin',
  'GET /osm/api/whoami': 'viewer',

  // the web dashboard (src/server/plugins/ui.ts): its files and pages hold no data (every API call
  // it makes is authenticated). `/*` is public only while server.ui_path holds another UI (route
  // config publicWhen); unknown API paths keep their 401/404, never the dashboard's index.
  'GET /': 'public',
  'GET /static/*': 'public',
  'GET /login': 'public',
  'GET /login/*': 'public',
  'GET /overview': 'public',
  'GET /overview/*': 'public',
  'GET /runs': 'public',
  'GET /runs/*': 'public',
  'GET /workflows': 'public',
  'GET /workflows/*': 'public',
  'GET /workspaces': 'public',
  'GET /workspaces/*': 'public',
  'GET /assets': 'public',
  'GET /assets/*': 'public',
  'GET /vulnerabilities': 'public',
  'GET /vulnerabilities/*': 'public',
  'GET /schedules': 'public',
  'GET /schedules/*': 'public',
  'GET /events': 'public',
  'GET /events/*': 'public',
  'GET /workers': 'public',
  'GET /workers/*': 'public',
  'GET /settings': 'public',
  'GET /settings/*': 'public',
  'GET /*': 'viewer',
  'GET /osm/api/*': 'viewer',
};

/**
 * Routes that act on the whole server rather than on one org's data: credentials bound to orgs may
 * not call them (whatever their role), besides every admin route — code execution, settings,
 * installs, users and orgs cannot be confined to an org. Lists of one org's data are filtered
 * instead (src/auth/scope.ts).
 */
const SERVER_WIDE: ReadonlySet<string> = new Set([
  'GET /metrics',
  'GET /osm/api/tasks',
  'GET /osm/api/tasks/:id',
  'POST /osm/api/tasks',
  'POST /osm/api/events/emit',
  'GET /osm/api/webhook-runs/list',
  'DELETE /osm/api/webhook-runs/:uuid',
]);

/** True when only an unbound credential may call the route (every admin route, and SERVER_WIDE). */
export function serverWide(method: string, url: string | undefined): boolean {
  if (url === undefined) return false;
  return accessOf(method, url) === 'admin' || SERVER_WIDE.has(`${method === 'HEAD' ? 'GET' : method} ${url}`);
}

/** The access rule of a matched route; `undefined` url = no route matched (404 after authentication). */
export function accessOf(method: string, url: string | undefined): Access {
  if (url === undefined) return 'viewer';
  return ROUTE_ACCESS[`${method === 'HEAD' ? 'GET' : method} ${url}`] ?? 'admin';
}
