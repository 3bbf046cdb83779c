import { masterOf } from '../../distributed/attach.js';
import { z } from 'zod';
import { RUN_STATUSES, type RunStatus } from '../../store/index.js';
import { boolParam, defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { submitApiRuns } from '../../services/runs.js';
import { submitDistributedRuns } from '../../distributed/service.js';
import { cancelRun, getRun, listRuns, runArtifacts, runSteps } from '../../services/run-control.js';
import { duplicateRun, resumeRun, startRun } from '../../services/run-reuse.js';
import { orgFilterFor } from '../../auth/scope.js';
import { scopeSpecSchema } from '../../scope/schema.js';

/**
 * Body of POST /runs. Unknown keys are ignored (the reference accepts many echo-only fields).
 * `skip_validation` only skips the engine's target-type dependency checks: targets and params are
 * always checked for shell metacharacters.
 */
const runBody = z
  .object({
    flow: z.string().optional(),
    module: z.string().optional(),
    workflow: z.string().optional(),
    target: z.string().optional(),
    targets: z.array(z.string()).optional(),
    target_file: z.string().optional(),
    params: z.record(z.string(), z.string()).optional(),
    priority: z.string().optional(),
    timeout: z.number().int().positive().optional(),
    concurrency: z.number().int().min(1).max(1000).optional(),
    runner_type: z.enum(['host', 'docker', 'ssh']).optional(),
    docker_image: z.string().optional(),
    ssh_host: z.string().optional(),
    workspace: z.string().optional(),
    threads_hold: z.number().int().min(0).optional(),
    heuristics_check: z.enum(['none', 'basic', 'advanced']).optional(),
    empty_target: z.boolean().optional(),
    skip_validation: z.boolean().optional(),
    run_mode: z.enum(['local', 'distributed']).optional(),
    /** run_mode distributed: only a worker with these labels takes the tasks (docs/distributed.md). */
    labels: z.array(z.string()).max(16).optional(),
    /** Target scope of these runs (docs/scope.md): `{ include, exclude }` lists or lines of text. */
    scope: scopeSpecSchema.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.runner_type === 'docker' && !b.docker_image) ctx.addIssue({ code: 'custom', path: ['docker_image'], message: "required when runner_type is 'docker'" });
    if (b.runner_type === 'ssh' && !b.ssh_host) ctx.addIssue({ code: 'custom', path: ['ssh_host'], message: "required when runner_type is 'ssh'" });
  });

const listQuery = z.object({
  status: z.enum(RUN_STATUSES as [RunStatus, ...RunStatus[]]).optional(),
  workflow_name: z.string().optional(),
  workflow: z.string().optional(),
  target: z.string().optional(),
  workspace: z.string().optional(),
  org: z.string().optional(),
  ...paginationShape(20),
});

const idParams = z.object({ id: z.string().min(1) });

/** Runs: create (queued), list, get, cancel, duplicate, start, steps, artifacts. */
export const registerRunRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/runs', summary: 'Queue runs of a flow or module against one or many targets', tags: ['runs'], sideEffects: 'executes',
    body: runBody,
    responses: { 202: { description: 'Runs queued (poll_url tracks the job)' }, 400: { description: 'Invalid request' }, 404: { description: 'Workflow not found' } },
    handler: async ({ body, reply, scope }) => {
      // Distributed runs go to the master's BullMQ queue (400 without --master); local ones to the run queue.
      const res = body.run_mode === 'distributed' ? await submitDistributedRuns(app, body, scope) : await submitApiRuns(app, body, () => deps.queue?.kick(), scope);
      reply.status(202);
      return res;
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/runs', summary: 'List runs, newest first', tags: ['runs'], sideEffects: 'none',
    query: listQuery,
    handler: async ({ query, scope }) => {
      const r = await listRuns(
        app,
        {
          status: query.status,
          workflow_name: query.workflow_name || query.workflow || undefined,
          target: query.target || undefined,
          workspace: query.workspace || undefined,
          org_uuid: await orgFilterFor(app, scope, query.org),
        },
        { offset: query.offset, limit: query.limit },
      );
      const out = listEnvelope(r.data, r.total, query.offset, query.limit);
      // A master warns when distributed tasks wait and no worker is online (additive field).
      const master = masterOf(app);
      const warnings = master ? await master.views.queueWarnings().catch(() => []) : [];
      return warnings.length > 0 ? { ...out, warnings } : out;
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/runs/:id', summary: 'One run by numeric id or run_uuid', tags: ['runs'], sideEffects: 'none',
    params: idParams,
    query: z.object({ include_steps: boolParam('include_steps'), include_artifacts: boolParam('include_artifacts') }),
    handler: async ({ params, query, scope }) => {
      const data = await getRun(app, params.id, { steps: query.include_steps, artifacts: query.include_artifacts }, scope);
      // A queued distributed run (its task id is the run_uuid) no online worker can take says why (additive field).
      const master = masterOf(app);
      const reason = master && data.status === 'queued' ? await master.views.waitingReason(data.run_uuid).catch(() => undefined) : undefined;
      return { data: reason ? { ...data, waiting_reason: reason } : data };
    },
  });

  for (const [method, url] of [['DELETE', '/osm/api/runs/:id'], ['POST', '/osm/api/runs/:id/cancel']] as const) {
    defineRoute(server, app, {
      method, url, summary: 'Cancel a run and kill its processes', tags: ['runs'], sideEffects: 'writes',
      params: idParams,
      responses: { 200: { description: 'Cancelled (killed_pids or note)' }, 400: { description: 'Run already finished' }, 404: { description: 'Run not found' } },
      handler: ({ params, scope }) => cancelRun(app, params.id, scope),
    });
  }

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/runs/:id/duplicate', summary: 'Copy a run as a new pending run', tags: ['runs'], sideEffects: 'writes',
    params: idParams,
    responses: { 201: { description: 'Pending copy created' }, 404: { description: 'Run not found' } },
    handler: async ({ params, reply, scope }) => {
      const res = await duplicateRun(app, params.id, scope);
      reply.status(201);
      return res;
    },
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/runs/:id/start', summary: 'Start a pending run (it joins the queue)', tags: ['runs'], sideEffects: 'executes',
    params: idParams,
    responses: { 202: { description: 'Run queued to start' }, 400: { description: 'Run is not pending' }, 404: { description: 'Run not found' } },
    handler: async ({ params, reply, scope }) => {
      const res = await startRun(app, params.id, deps.queue, scope);
      reply.status(202);
      return res;
    },
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/runs/:id/resume', summary: 'Resume a failed or cancelled run from its first unfinished step (as a new queued run)', tags: ['runs'], sideEffects: 'executes',
    params: idParams,
    responses: { 202: { description: 'Resumed run queued' }, 400: { description: 'Run is not failed or cancelled' }, 404: { description: 'Run not found' } },
    handler: async ({ params, reply, scope }) => {
      const r = await resumeRun(app, params.id, { status: 'queued' }, scope);
      deps.queue?.kick();
      reply.status(202);
      return {
        message: 'Run resumed',
        original_run_uuid: r.original.run_uuid,
        run_uuid: r.run.run_uuid,
        id: r.run.id,
        status: (await app.repos.runs.get(r.run.id))?.status ?? r.run.status,
        reused_steps: r.reused,
        poll_url: `/osm/api/runs/${r.run.run_uuid}`,
      };
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/runs/:id/steps', summary: 'Step results of a run, in execution order', tags: ['runs'], sideEffects: 'none',
    params: idParams,
    handler: async ({ params, scope }) => ({ data: await runSteps(app, params.id, scope) }),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/runs/:id/artifacts', summary: 'Artifacts of a run', tags: ['runs'], sideEffects: 'none',
    params: idParams,
    handler: async ({ params, scope }) => ({ data: await runArtifacts(app, params.id, scope) }),
  });
};
