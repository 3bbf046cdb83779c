import { z } from 'zod';
import { errors } from '../../errors.js';
import { boolParam, defineRoute, listEnvelope, paginationShape } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { liveScheduler } from '../../scheduler/index.js';
import { listWorkflows, refreshWorkflows, uploadWorkflow, workflowDetailOf, workflowSource, workflowTags } from '../../services/workflows.js';

const listQuery = z.object({
  source: z.enum(['db', 'filesystem']).optional(),
  kind: z.enum(['flow', 'module']).optional(),
  tags: z.string().optional(),
  search: z.string().optional(),
  ...paginationShape(50),
});

/** The largest workflow file accepted by an upload (a workflow is small text). */
const WORKFLOW_UPLOAD_MAX = 4 * 1024 * 1024;

/** Workflows: index listing, tags, refresh, one workflow (YAML or JSON detail), upload. */
export const registerWorkflowRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workflows', summary: 'List workflows (index by default, or a fresh parse with source=filesystem)', tags: ['workflows'], sideEffects: 'none',
    query: listQuery,
    handler: async ({ query }) => {
      const r = await listWorkflows(app, {
        source: query.source ?? 'db',
        kind: query.kind,
        tags: query.tags ? query.tags.split(',') : undefined,
        search: query.search,
        offset: query.offset,
        limit: query.limit,
      });
      return listEnvelope(r.data, r.total, query.offset, query.limit);
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workflows/tags', summary: 'Distinct tags of the indexed workflows', tags: ['workflows'], sideEffects: 'none',
    handler: () => workflowTags(app),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/workflows/refresh', summary: 'Re-index the workflows folder', tags: ['workflows'], sideEffects: 'writes',
    query: z.object({ force: boolParam('force') }),
    handler: async ({ query }) => {
      const r = await refreshWorkflows(app, Boolean(query.force));
      // New or changed triggers register now rather than at the scheduler's next poll.
      liveScheduler(app)?.reloadWorkflowTriggers();
      return { message: 'Workflows indexed successfully', added: r.added, updated: r.updated, removed: r.removed, errors: r.errors };
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/workflows/:name', summary: 'One workflow: raw YAML, or the detail object with json=true', tags: ['workflows'], sideEffects: 'none',
    params: z.object({ name: z.string() }),
    query: z.object({ json: boolParam('json') }),
    responses: { 200: { description: 'text/yaml by default; the detail object with json=true' }, 400: { description: 'Invalid workflow name' }, 404: { description: 'Workflow not found' } },
    handler: ({ params, query, reply }) => {
      if (query.json) return workflowDetailOf(app, params.name);
      const text = workflowSource(app, params.name);
      return reply.type('text/yaml; charset=utf-8').send(text);
    },
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/workflow-upload', summary: 'Upload a workflow YAML file (validated before it is saved)', tags: ['workflows'], sideEffects: 'writes',
    bodyKind: 'multipart',
    responses: { 201: { description: 'Saved and indexed' }, 400: { description: 'No file, not YAML, or invalid workflow' }, 409: { description: 'File exists (use force=true)' } },
    query: z.object({ force: boolParam('force') }),
    handler: async ({ req, query, reply }) => {
      if (!req.isMultipart()) throw errors.noFileProvided();
      let file: { filename: string; content: Buffer } | undefined;
      let force = Boolean(query.force);
      for await (const part of req.parts({ limits: { fileSize: WORKFLOW_UPLOAD_MAX } })) {
        if (part.type === 'file') {
          if (part.fieldname === 'file' && !file) file = { filename: part.filename, content: await part.toBuffer() };
          else part.file.resume();
        } else if (part.fieldname === 'force') {
          force = force || ['true', '1', 'yes'].includes(String(part.value).toLowerCase());
        }
      }
      if (!file || (file.filename === '' && file.content.length === 0)) throw errors.noFileProvided();
      const saved = await uploadWorkflow(app, { filename: file.filename, content: file.content, force });
      liveScheduler(app)?.reloadWorkflowTriggers();
      reply.status(201);
      return { message: 'Workflow uploaded', ...saved };
    },
  });
};
