import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { errors, isOsmError } from '../../errors.js';

/** The error envelope of the spec. */
export function envelope(message: string, extra?: Record<string, unknown>) {
  return { error: true as const, message, ...(extra ?? {}) };
}

/**
 * Errors of the multipart parser (@fastify/busboy) on a broken body: plain Errors without a code
 * or status, so they are recognised by message (truncated body, missing or over-long boundary).
 */
const MULTIPART_PARSE_ERROR = /multipart data$|^Multipart: Boundary not found$|^Boundary required$|^The needle cannot/;

/** Longest path parameter the router accepts (fastify's `maxParamLength`). */
export const MAX_PARAM_LENGTH = 1000;

/**
 * fastify's `frameworkErrors` option: URLs the router rejects before any route or hook runs
 * (malformed percent-encoding, over-long path parameters) would otherwise get fastify's own body
 * (`{ error, code, message, statusCode }`, echoing the whole URL); they get the envelope too.
 */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const e = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? errors.paramTooLong(MAX_PARAM_LENGTH) : err.code === 'FST_ERR_BAD_URL' ? errors.badUrl() : errors.badRequest('Bad request');
  void reply.status(e.status).send(envelope(e.message));
}

/**
 * fastify's `clientErrorHandler` option: requests Node's HTTP parser cannot read (a NUL or control
 * byte in the request line, oversized headers, a timeout) are answered on the raw socket, with
 * the envelope rather than fastify's own body.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? errors.requestTimeout() : err.code === 'HPE_HEADER_OVERFLOW' ? errors.headersTooLarge() : errors.malformedHttp();
  const body = JSON.stringify(envelope(e.message));
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/**
 * One error handler: catalogue errors keep their status and message; fastify's own client errors
 * (malformed JSON, body too large, bad content type) get the envelope with a clear message;
 * anything else is a bug: logged with its stack, answered 500 with a generic message.
 */
export function registerErrorHandling(server: FastifyInstance, opts: { bodyLimit: number }): void {
  server.setErrorHandler((err: FastifyError, req, reply) => {
    if (isOsmError(err)) {
      if (err.headers) reply.headers(err.headers);
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
    if (!code && MULTIPART_PARSE_ERROR.test(err.message ?? '')) {
      return reply.status(400).send(envelope(errors.malformedMultipart(err.message).message));
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
