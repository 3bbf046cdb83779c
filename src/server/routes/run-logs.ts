import { z } from 'zod';
import { defineRoute, intParam } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { openRunLogs, type RunLogItem } from '../../services/run-logs.js';
import { lastEventId, sseText, StreamResponse, wantsEventStream } from '../sse.js';

const query = z.object({
  step: z.string().min(1).max(512).optional(),
  tail: intParam('tail', { min: 0, cap: 1_000_000 }),
  format: z.enum(['text', 'jsonl']).optional(),
});

const SSE_EXAMPLE = [
  'id: 2',
  'event: line',
  'data: {"step":"scan","stream":"stdout","line":"80/tcp open","ts":"2026-11-26T10:00:01.250Z"}',
  '',
  'id: 3',
  'event: line',
  'data: {"step":"probe","substep":"http","stream":"stdout","line":"200 OK","ts":"2026-11-26T10:00:01.300Z"}',
  '',
  'id: 5',
  'event: step',
  'data: {"step":"scan","status":"completed","exit_code":0,"duration_ms":1820}',
  '',
  'event: end',
  'data: {"status":"completed"}',
  '',
].join('\n');

const DESCRIPTION = [
  'With `Accept: text/event-stream`: Server-Sent Events. First what the run printed so far (or the last `tail` lines), then every',
  'new line as the step writes it, until the run ends. Events:',
  '`line` `{"step","substep"?,"stream":"stdout"|"stderr","line","ts"}` (`substep`: the `parallel-steps` child that wrote the line, when one did); `step` `{"step","status":"running"|"completed"|"failed"|"skipped","exit_code","duration_ms"}`',
  'when a step changes state; `end` `{"status":"completed"|"failed"|"cancelled"}` once the run is terminal, then the stream closes.',
  'Every `line` and `step` event has an `id:` (the run\'s sequence number): reconnecting with `Last-Event-ID: <id>` resumes right after it,',
  'with nothing lost or repeated. A `: heartbeat` comment comes every 15 s; credentials are checked again at each one.',
  'Otherwise the output written so far: plain text lines (default), or JSON lines with `format=jsonl` (or `Accept: application/x-ndjson`)',
  '(`{"id","event":"line",…}` with `substep` as above, `{"id","event":"step",…}`, and `{"event":"end","status"}` when the run is terminal);',
  'a plain text line written by a `parallel-steps` child starts with `[child] `, as in the terminal.',
  '`step` keeps one step\'s lines (a `parallel-steps` child\'s name keeps that child\'s); a name that is neither a step of the run nor in its output',
  'is a 404 (while a followed run is still going, a step that has not started yet is waited for).',
  'Secrets of the run and of the settings are shown as [REDACTED].',
].join(' ');

/** GET /runs/{id}/logs: a run's step output as SSE (live), plain text or JSON lines. */
/**
 * True when the Accept header asks for JSON lines (`application/x-ndjson`, `application/jsonl`,
 * `application/json`) before plain text; `?format=` still decides when given.
 */
export function wantsJsonLines(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const part of accept.toLowerCase().split(',')) {
    const type = part.split(';')[0]!.trim();
    if (type === 'text/plain') return false;
    if (/^application\/(x-ndjson|ndjson|jsonl|x-jsonlines|json)$/.test(type)) return true;
  }
  return false;
}

export const registerRunLogRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/runs/:id/logs', summary: "A run's step output: live Server-Sent Events, plain text or JSON lines", tags: ['runs'], sideEffects: 'none',
    description: DESCRIPTION,
    params: z.object({ id: z.string().min(1) }),
    query,
    responses: {
      200: {
        description: 'The stream (text/event-stream), or the lines so far (text/plain, application/x-ndjson)',
        content: {
          'text/event-stream': { example: SSE_EXAMPLE },
          'text/plain': { example: '80/tcp open\n443/tcp open\n' },
          'application/x-ndjson': { example: '{"id":2,"event":"line","step":"scan","stream":"stdout","line":"80/tcp open","ts":"2026-11-26T10:00:01.250Z"}\n' },
        },
      },
      404: { description: 'Run not found, or `step` names no step of the run' },
    },
    handler: async ({ req, reply, params, query: q }) => {
      const sse = wantsEventStream(req);
      const format = sse ? 'sse' : (q.format ?? (wantsJsonLines(req.headers.accept) ? 'jsonl' : 'text'));
      const session = await openRunLogs(app, req.principal, params.id, { step: q.step, tail: q.tail, after: sse ? lastEventId(req) : undefined, follow: sse });
      const contentType = sse ? 'text/event-stream; charset=utf-8' : format === 'jsonl' ? 'application/x-ndjson; charset=utf-8' : 'text/plain; charset=utf-8';
      // HEAD: the headers only (a stream that nobody reads must not be followed).
      if (req.method === 'HEAD') {
        reply.header('content-type', contentType);
        return '';
      }
      const stream = new StreamResponse(server, app, req, reply, {
        sse,
        noAuth: deps.noAuth,
        contentType,
      });
      stream.start();
      const text = (item: RunLogItem): string => {
        if (format === 'sse') {
          if (item.type === 'line') return sseText('line', { step: item.step, ...(item.substep ? { substep: item.substep } : {}), stream: item.stream, line: item.line, ts: item.ts }, item.id);
          if (item.type === 'step') return sseText('step', { step: item.step, status: item.status, exit_code: item.exit_code, duration_ms: item.duration_ms }, item.id);
          return sseText('end', { status: item.status });
        }
        if (format === 'jsonl') {
          const { type, ...rest } = item;
          return `${JSON.stringify(item.type === 'end' ? { event: type, ...rest } : { id: item.id, event: type, ...rest })}\n`;
        }
        if (item.type !== 'line') return '';
        return item.substep ? `[${item.substep}] ${item.line}\n` : `${item.line}\n`;
      };
      void (async () => {
        try {
          // One write per batch: what a read found goes out together.
          for await (const batch of session.batches(stream.signal)) if (!(await stream.write(batch.map(text).join('')))) break;
        } catch (err) {
          req.log.warn({ err }, 'log stream failed');
        } finally {
          await session.close();
          stream.end();
        }
      })();
    },
  });
};
