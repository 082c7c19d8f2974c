// One error handler for the whole server: every failure leaves as JSON in a SPEC.md section 7 shape, and
// server faults are logged in full but answered without internals.

import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ApiError, ValidationError } from '../domain/errors.js';
import { isServiceOutage, ServiceUnavailable } from './service-outage.js';
import { fieldErrorsFrom } from './validation.js';

/** Fastify's own request errors, by code: the status we answer and the message a client gets. */
const FRAMEWORK_ERRORS = new Map<string, [number, string]>([
  ['FST_ERR_CTP_INVALID_MEDIA_TYPE', [415, 'Unsupported Content-Type: send application/json or application/x-www-form-urlencoded']],
  ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', [400, 'Content-Length does not match the body']],
  ['FST_ERR_CTP_BODY_TOO_LARGE', [413, 'Request body is too large']],
  ['FST_ERR_CTP_EMPTY_JSON_BODY', [400, 'Malformed JSON body']],
  ['FST_ERR_CTP_INVALID_JSON_BODY', [400, 'Malformed JSON body']],
  ['FST_ERR_BAD_URL', [400, 'Malformed URL']],
  ['FST_ERR_ASYNC_CONSTRAINT', [400, 'Malformed request']],
  // A path segment longer than any id Plumb issues names nothing that exists.
  ['FST_ERR_MAX_PARAM_LENGTH', [404, 'Not found']],
]);

/**
 * For the errors Fastify raises while routing, before any handler or hook exists (the `frameworkErrors`
 * option): the same JSON shapes as everything else, and never the URL echoed back.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const [status, message] = (error.code && FRAMEWORK_ERRORS.get(error.code)) || [400, 'Malformed request'];
  void reply.code(status).send({ error: message });
}

/** Node's HTTP parser errors, by code: what is answered on the raw socket before Fastify sees a request. */
const CLIENT_ERRORS = new Map<string, [number, string, string]>([
  ['ERR_HTTP_REQUEST_TIMEOUT', [408, 'Request Timeout', 'The request took too long to arrive']],
  ['HPE_HEADER_OVERFLOW', [431, 'Request Header Fields Too Large', 'Request headers are too large']],
]);

/**
 * Connections carrying an import's upload, which an authorised caller streams for as long as the export takes to
 * read (the Umami importer reads the body as it arrives: a 1 GB export takes minutes). Node's request timeout is
 * one for the whole server and cannot be lifted per request; on these it is not acted on. Added by the import
 * routes after their access checks, removed once the answer is sent.
 */
export const LONG_UPLOADS = new WeakSet<Socket>();

/**
 * For requests Node's HTTP parser refuses (oversized headers, a malformed request line, a request that took too
 * long): Fastify's `clientErrorHandler`, answering `{error}` like everything else, then closing the connection.
 */
export function clientErrorHandler(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && LONG_UPLOADS.has(socket)) return;
  const [status, reason, message] = CLIENT_ERRORS.get(error.code ?? '') ?? [400, 'Bad Request', 'Malformed request'];
  const body = JSON.stringify({ error: message });
  // An answer to HEAD has no body (RFC 9110, 9.3.2): a client reads the bytes after its head as garbage. The
  // method is read from the bytes the parser refused, which start with it when the client sent its head at once.
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  }
  socket.destroy(error);
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply.code(err.status).headers(err.headers()).type('application/json; charset=utf-8').send(err.body());
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validation?: ErrorObject[]; validationContext?: string }, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (error.validation) {
      return sendError(reply, new ValidationError(fieldErrorsFrom(error.validation, error.validationContext ?? 'body')));
    }
    const known = error.code ? FRAMEWORK_ERRORS.get(error.code) : undefined;
    if (known) return reply.code(known[0]).send({ error: known[1] });
    if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
      return reply.code(400).send({ error: 'Malformed JSON body' });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send({ error: error.message });
    if (isServiceOutage(error)) {
      request.log.warn({ err: error }, 'a storage service is unavailable');
      return sendError(reply, new ServiceUnavailable());
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ error: 'Internal server error' });
  });

  app.setNotFoundHandler((request: FastifyRequest, reply) =>
    reply.code(404).send({ error: `No route for ${request.method} ${request.url.split('?')[0]!.slice(0, 200)}` }),
  );
}
