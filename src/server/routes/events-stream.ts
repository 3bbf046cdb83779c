import type { RegisterRoutes } from '../app.js';
import { defineRoute } from '../route.js';
import { openEventStream } from '../../services/event-stream.js';
import { errors } from '../../errors.js';
import { lastEventId, StreamResponse, wantsEventStream } from '../sse.js';

const EXAMPLE = [
  'id: 41',
  'event: run.started',
  'data: {"id":7,"run_uuid":"9b0c…","status":"running","workflow_name":"subdomain","target":"example.com","workspace":"example.com","completed_steps":0,"total_steps":4}',
  '',
  'id: 42',
  'event: step.completed',
  'data: {"run_uuid":"9b0c…","step_name":"enum","status":"completed","exit_code":0,"duration_ms":5120}',
  '',
].join('\n');

/** GET /events/stream: run and step state changes as Server-Sent Events. */
export const registerEventStreamRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/events/stream', summary: 'Run and step state changes as Server-Sent Events', tags: ['events'], sideEffects: 'none',
    description: [
      'Needs `Accept: text/event-stream`. Each `run.*` / `step.*` record of the event log as it is recorded (run.started, run.completed,',
      'run.failed, run.cancelled, step.completed, step.failed), with the record\'s topic as the event name and its id as `id:`.',
      'Run events carry the run summary `{id, run_uuid, status, workflow_name, target, workspace, completed_steps, total_steps, current_step?}`,',
      'step events `{run_uuid, step_name, status, exit_code, duration_ms}`. Without `Last-Event-ID` the stream starts now; with it, right',
      'after that record. A `: heartbeat` comment comes every 15 s; credentials are checked again at each one.',
    ].join(' '),
    responses: {
      200: { description: 'The stream', content: { 'text/event-stream': { example: EXAMPLE } } },
      406: { description: 'The request does not accept text/event-stream' },
    },
    handler: ({ req, reply }) => {
      if (!wantsEventStream(req)) throw errors.notAcceptable('this endpoint streams Server-Sent Events: send Accept: text/event-stream');
      if (req.method === 'HEAD') {
        reply.header('content-type', 'text/event-stream; charset=utf-8');
        return '';
      }
      const session = openEventStream(app, req.principal, lastEventId(req));
      const stream = new StreamResponse(server, app, req, reply, { sse: true, noAuth: deps.noAuth, contentType: 'text/event-stream; charset=utf-8' });
      stream.start();
      void (async () => {
        try {
          for await (const e of session.items(stream.signal)) if (!(await stream.event(e.topic, e.data, e.id))) break;
        } catch (err) {
          req.log.warn({ err }, 'event stream failed');
        } finally {
          stream.end();
        }
      })();
    },
  });
};
