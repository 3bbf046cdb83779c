/**
 * Use cases of the master's API, shared by the routes: submit a task, list and read tasks and
 * workers, propagate a cancel. Each needs a running master (`osm serve --master`).
 */
import { errors } from '../errors.js';
import type { AppContext } from '../services/context.js';
import { submitDistributedApiRuns, type ApiRunRequest, type DistributedRunResponse } from '../services/runs.js';
import { masterOf } from './attach.js';
import type { DistributedMaster } from './master.js';
import { UNRESTRICTED, type Scope } from '../auth/scope.js';

/** The daemon's master; 400 `Distributed mode requires … --master flag` without one. */
export function requireMaster(app: AppContext): DistributedMaster {
  const m = masterOf(app);
  if (!m) throw errors.distributedRequiresMaster();
  return m;
}

/** `POST /runs` with `run_mode: distributed`. */
export function submitDistributedRuns(app: AppContext, req: ApiRunRequest, scope: Scope = UNRESTRICTED): Promise<DistributedRunResponse> {
  const master = masterOf(app);
  return submitDistributedApiRuns(app, req, master ? (runs) => master.submit(runs) : undefined, scope);
}

export interface TaskRequest {
  workflow?: string;
  workflow_name?: string;
  workflow_kind?: 'flow' | 'module';
  target?: string;
  params?: Record<string, string>;
  priority?: string;
  labels?: string[];
}

/**
 * `POST /tasks`: one run row (queued, run_mode distributed) and its task; validated like
 * `POST /runs` (name, target and params checks, workflow must exist on the master).
 */
export async function submitTask(app: AppContext, body: TaskRequest) {
  const master = requireMaster(app);
  const name = (body.workflow_name ?? body.workflow ?? '').trim();
  if (!name) throw errors.validation('workflow_name is required');
  if (!body.target || !body.target.trim()) throw errors.validation('target is required');
  const kindKey = body.workflow_kind === 'flow' ? 'flow' : body.workflow_kind === 'module' ? 'module' : 'workflow';
  const res = await submitDistributedApiRuns(app, { [kindKey]: name, target: body.target, params: body.params, priority: body.priority, labels: body.labels }, (runs) => master.submit(runs));
  return {
    message: 'Task submitted' as const,
    task_id: res.run_uuid!,
    run_uuid: res.run_uuid!,
    workflow: res.workflow,
    kind: res.kind,
    target: res.target!,
    priority: res.priority,
    status: 'queued' as const,
    ...(body.labels?.length ? { labels: [...new Set(body.labels)] } : {}),
    poll_url: `/osm/api/tasks/${res.run_uuid}`,
  };
}
