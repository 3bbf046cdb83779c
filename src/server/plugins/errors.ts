import type { FastifyError, FastifyInstance } from 'fastify';
import { isOsmError } from '../../errors.js';

/** The error envelope of the spec. */
export function envelope(message: string, extra?: Record<string, unknown>) {
  return { error: true as const, message, ...(extra ?? {}) };
}

/**
 * One error handler: catalogue errors keep their status and message; fastify's own client errors
 * (malformed JSON, body too large, bad content type) get the envelope with a clear message;
 * anything else is a bug: logged with its stack, answered 500 with a generic message.
 */
export function registerErrorHandling(server: FastifyInstance, opts: { bodyLimit: number }): void {
  server.setErrorHandler((err: FastifyError, req, reply) => {
    if (isOsmError(err)) {
      return reply.status(err.status).send(envelope(err.message, err.extra));
    }
    const code = err.code ?? '';
    if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (err instanceof SyntaxError && (err.statusCode ?? 400) === 400)) {
      return reply.status(400).send(envelope('Invalid request body'));
    }
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) {
      return reply.status(413).send(envelope(`Request body is too large (limit ${opts.bodyLimit} bytes)`));
    }
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 415) {
      return reply.status(415).send(envelope(`Unsupported content type: ${req.headers['content-type'] ?? '(none)'}`));
    }
    if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      return reply.status(413).send(envelope(err.message || 'Upload is too large'));
    }
    if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
      return reply.status(400).send(envelope('Request is not multipart/form-data'));
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      return reply.status(status).send(envelope(err.message || 'Bad request'));
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send(envelope('Internal server error'));
  });

  server.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    reply.status(404).send(envelope(`Route ${req.method} ${path} not found`));
  });
}
