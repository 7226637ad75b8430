// RFC 9457 problem+json for every error, with the stable codes of contract: "Errors".
// Services throw AppError; the handler below turns it (and Fastify's own errors) into a body.
// Unknown errors are logged with the request id and answered with a generic 500.
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preValidationHookHandler,
} from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DatabaseBusyError } from '../db/database.js';
import { isDiskFull, noteDiskFull } from '../db/errors.js';
import { findUnsafeText, type UnsafeText } from './safe-text.js';

export type ProblemCode =
  | 'validation_failed'
  | 'unauthenticated'
  | 'token_expired'
  | 'invalid_credentials'
  | 'refresh_token_reused'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'immutable'
  | 'not_eligible'
  | 'guard_not_satisfied'
  | 'invalid_transition'
  | 'insufficient_funds'
  | 'insufficient_quantity'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'invalid_definition'
  | 'rate_limited'
  | 'headers_too_large'
  | 'model_unavailable'
  | 'service_unavailable'
  | 'insufficient_storage'
  | 'internal';

const STATUS: Record<ProblemCode, number> = {
  validation_failed: 400,
  unauthenticated: 401,
  token_expired: 401,
  invalid_credentials: 401,
  refresh_token_reused: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  immutable: 409,
  not_eligible: 409,
  guard_not_satisfied: 409,
  invalid_transition: 409,
  insufficient_funds: 409,
  insufficient_quantity: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  invalid_definition: 422,
  rate_limited: 429,
  headers_too_large: 431,
  model_unavailable: 503,
  service_unavailable: 503,
  insufficient_storage: 507,
  internal: 500,
};
export const statusOf = (code: ProblemCode): number => STATUS[code];

const TITLE: Record<ProblemCode, string> = {
  validation_failed: 'Validation failed',
  unauthenticated: 'Authentication required',
  token_expired: 'Access token expired',
  invalid_credentials: 'Invalid email or password',
  refresh_token_reused: 'Refresh token reused',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  request_timeout: 'Request timeout',
  conflict: 'Conflict',
  immutable: 'Immutable',
  not_eligible: 'Not eligible',
  guard_not_satisfied: 'Guard not satisfied',
  invalid_transition: 'Invalid transition',
  insufficient_funds: 'Insufficient funds',
  insufficient_quantity: 'Insufficient quantity',
  payload_too_large: 'Payload too large',
  uri_too_long: 'URI too long',
  unsupported_media_type: 'Unsupported media type',
  invalid_definition: 'Invalid definition',
  rate_limited: 'Too many requests',
  headers_too_large: 'Request header fields too large',
  model_unavailable: 'Model provider unavailable',
  service_unavailable: 'Service unavailable',
  insufficient_storage: 'Insufficient storage',
  internal: 'Internal server error',
};

export interface FieldProblem {
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  [extension: string]: unknown;
}

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
  })
  .catchall(z.unknown())
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

export class AppError extends Error {
  constructor(
    public readonly code: ProblemCode,
    detail?: string,
    public readonly extensions: Record<string, unknown> = {},
    public readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? TITLE[code]);
    this.name = 'AppError';
  }
  get status(): number {
    return STATUS[this.code];
  }
  toProblem(): Problem {
    return makeProblem(this.code, this.message, this.extensions);
  }
}

export function makeProblem(
  code: ProblemCode,
  detail?: string,
  extensions: Record<string, unknown> = {},
): Problem {
  return {
    type: `/problems/${code}`,
    title: TITLE[code],
    status: STATUS[code],
    detail: detail ?? TITLE[code],
    code,
    ...extensions,
  };
}

export const notFound = (what = 'resource') => new AppError('not_found', `No such ${what}`);
export const forbidden = (detail = 'You may not do this') => new AppError('forbidden', detail);
export const validationFailed = (errors: FieldProblem[], detail = 'The request is not valid') =>
  new AppError('validation_failed', detail, { errors });

/** zod issues → the contract's `errors: [{ path, message }]`. */
export function zodErrors(error: z.ZodError, prefix?: string): FieldProblem[] {
  return error.issues.map((i) => ({
    path: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(root)',
    message: i.message,
  }));
}

/** Unsafe text (safe-text.ts) as the contract's field problem: the path joined like zod's. */
function unsafeTextProblem(found: UnsafeText): FieldProblem {
  return { path: found.path.map(String).join('.') || '(root)', message: found.message };
}

/** The validation problem of input holding U+0000 or an unpaired surrogate anywhere (a string, an
 * object key, nested), or null. `prefix` starts the field's path (`body`, `chatMessage`). */
export function unsafeTextErrors(input: unknown, prefix?: string): FieldProblem[] | null {
  const found = findUnsafeText(input, prefix ? [prefix] : []);
  return found ? [unsafeTextProblem(found)] : null;
}

/** Checks input for unsafe text, then parses it with a schema; the failure is the contract's
 * `errors`. For socket payloads and handshakes, and anything that does not come through a
 * Fastify route schema (routes get the same check from `rejectUnsafeText`). */
export function safeParseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  prefix?: string,
): { success: true; data: z.output<S> } | { success: false; errors: FieldProblem[] } {
  const unsafe = unsafeTextErrors(input, prefix);
  if (unsafe) return { success: false, errors: unsafe };
  const result = schema.safeParse(input);
  if (!result.success) return { success: false, errors: zodErrors(result.error, prefix) };
  return { success: true, data: result.data };
}

/** Parses input like `safeParseInput`, throwing the contract's validation problem. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, prefix?: string): z.output<S> {
  const result = safeParseInput(schema, input, prefix);
  if (!result.success) throw validationFailed(result.errors);
  return result.data;
}

/**
 * preValidation hook for every route (app.ts): the params, body, querystring and headers Fastify
 * is about to validate (in its order) must hold no U+0000 and no unpaired surrogate, which
 * PostgreSQL refuses (a 500) or a text column would silently change. Refused as 400
 * `validation_failed` naming the field (`body.name`, `querystring.q`), the shape of a schema
 * failure, before any schema or handler runs, so a route that reports its own schema failures
 * (attachValidation) answers it the same way.
 */
export const rejectUnsafeText: preValidationHookHandler = (request, _reply, done) => {
  const parts = [
    ['params', request.params],
    ['body', request.body],
    ['querystring', request.query],
    ['headers', request.headers],
  ] as const;
  for (const [part, value] of parts) {
    const errors = unsafeTextErrors(value, part);
    if (errors) {
      done(validationFailed(errors));
      return;
    }
  }
  done();
};

/** Anything thrown → a problem that is safe to show a client. */
export function toProblem(err: unknown): Problem {
  if (err instanceof AppError) return err.toProblem();
  if (err instanceof z.ZodError)
    return makeProblem('validation_failed', 'The request is not valid', { errors: zodErrors(err) });
  if (err instanceof DatabaseBusyError)
    return makeProblem('service_unavailable', 'The database is busy; try again');
  if (isDiskFull(err)) {
    noteDiskFull();
    return makeProblem(
      'insufficient_storage',
      "The server's disk is full: nothing of this request was stored; try again once space is freed",
    );
  }
  return makeProblem('internal', 'An unexpected error occurred');
}

function fastifyErrorToProblem(err: FastifyError, request: FastifyRequest): Problem | undefined {
  if (hasZodFastifySchemaValidationErrors(err)) {
    const part = err.validationContext ?? 'body';
    const errors = err.validation.map((v) => ({
      path: [
        part,
        ...String(v.instancePath ?? '')
          .split('/')
          .filter(Boolean),
      ].join('.'),
      message: v.message ?? 'invalid',
    }));
    return makeProblem('validation_failed', 'The request is not valid', { errors });
  }
  if (isResponseSerializationError(err)) {
    request.log.error({ err, issues: err.cause.issues }, 'response did not match its schema');
    return makeProblem('internal', 'An unexpected error occurred');
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return makeProblem('payload_too_large', 'The request body is larger than allowed');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return makeProblem('validation_failed', 'The body is not valid JSON', {
        errors: [{ path: 'body', message: err.message }],
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return makeProblem('unsupported_media_type', 'This content type is not accepted here');
    case 'FST_ERR_RATE_LIMIT_EXCEEDED':
      return makeProblem('rate_limited', 'Too many requests; try again later');
    default:
      break;
  }
  if (err.validation) {
    return makeProblem('validation_failed', 'The request is not valid', {
      errors: err.validation.map((v) => ({
        path: v.instancePath || '(root)',
        message: v.message ?? 'invalid',
      })),
    });
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    const code: ProblemCode =
      err.statusCode === 401
        ? 'unauthenticated'
        : err.statusCode === 403
          ? 'forbidden'
          : err.statusCode === 404
            ? 'not_found'
            : err.statusCode === 413
              ? 'payload_too_large'
              : err.statusCode === 415
                ? 'unsupported_media_type'
                : err.statusCode === 429
                  ? 'rate_limited'
                  : 'validation_failed';
    return makeProblem(code, code === 'validation_failed' ? 'The request is not valid' : undefined, {
      ...(code === 'validation_failed' ? { errors: [{ path: '(request)', message: err.message }] } : {}),
    });
  }
  return undefined;
}

/** The problem code each answered reply carried (the audit log reads it after the response). */
const sentCodes = new WeakMap<object, string>();

/** The `code` of the problem this reply was answered with, if it was one. */
export function problemCodeOf(reply: FastifyReply): string | undefined {
  return sentCodes.get(reply.raw);
}

export function sendProblem(reply: FastifyReply, problem: Problem, headers: Record<string, string> = {}) {
  sentCodes.set(reply.raw, problem.code);
  for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
  return reply
    .status(problem.status)
    .type('application/problem+json')
    .serializer(JSON.stringify)
    .send(problem);
}

/** Fastify's `frameworkErrors` (a server option, app.ts): errors raised while routing, before any
 * hook or error handler: a URL that is not validly percent-encoded (FST_ERR_BAD_URL, 400) and a
 * path parameter longer than the router's `maxParamLength` (FST_ERR_MAX_PARAM_LENGTH, 414). */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let problem: Problem;
  if (err.code === 'FST_ERR_BAD_URL')
    problem = makeProblem('validation_failed', 'The request is not valid', {
      errors: [{ path: 'url', message: 'the URL is not validly percent-encoded' }],
    });
  else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    problem = makeProblem('uri_too_long', 'A path segment is longer than allowed');
  else {
    request.log.error({ err }, 'routing failed');
    problem = makeProblem('internal', 'An unexpected error occurred');
  }
  void sendProblem(reply, problem);
}

/** The raw HTTP/1.1 answer of `clientErrorHandler`: a problem+json body, then the connection
 * closes. */
export function rawProblemResponse(problem: Problem): string {
  const body = JSON.stringify(problem);
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\n` +
    'Content-Type: application/problem+json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The problem answering an error of Node's HTTP parser (`clientError`). */
export function clientErrorProblem(err: { code?: string }): Problem {
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return makeProblem('headers_too_large', 'The request line and headers are larger than allowed');
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return makeProblem('request_timeout', 'The request did not arrive in time');
  return makeProblem('validation_failed', 'The request is not valid HTTP', {
    errors: [{ path: '(request)', message: 'malformed HTTP request' }],
  });
}

/** The response of each socket's latest request. */
const responding = new WeakMap<Socket, ServerResponse>();

/** Notes each request's response on its socket (app.ts, on the Node server under Fastify), for
 * `clientErrorHandler`. */
export function trackResponses(server: Server): void {
  server.on('request', (req, res: ServerResponse) => responding.set(req.socket, res));
}

/**
 * Fastify's `clientErrorHandler` (a server option, app.ts): errors of Node's HTTP parser, raised
 * before any request exists (a request line and headers over the size limit, a request that did
 * not arrive in time, bytes that are not HTTP). Answers on the raw socket, as Node's own handler
 * does, but with a problem+json body, then closes the connection. Nothing is written when a
 * response is already under way on the socket (it would corrupt what the peer reads).
 */
export function clientErrorHandler(
  this: FastifyInstance,
  err: Error & { code?: string },
  socket: Socket,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.debug({ err: err.message, code: err.code }, 'client error');
  // A response whose headers went out and which has not finished is under way.
  const res = responding.get(socket);
  const underWay = res !== undefined && res.headersSent && !res.writableFinished;
  if (socket.writable && !underWay) socket.write(rawProblemResponse(clientErrorProblem(err)));
  socket.destroy(err);
}

/** The problem (and headers) answering an error a route or hook threw: an AppError as it says,
 * Fastify's own errors mapped to the contract's codes, anything else a generic 500 (logged). */
export function problemOf(
  err: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): { problem: Problem; headers: Record<string, string> } {
  let problem: Problem | undefined;
  let headers: Record<string, string> = {};
  if (err instanceof AppError) {
    problem = err.toProblem();
    headers = err.headers;
  } else {
    problem = fastifyErrorToProblem(err, request);
    if (problem?.code === 'rate_limited' && !reply.getHeader('retry-after')) headers['retry-after'] = '60';
  }
  if (!problem) {
    problem = toProblem(err);
    if (problem.code === 'internal') request.log.error({ err }, 'unhandled error');
    else request.log.warn({ err: err.message }, problem.code);
  }
  return { problem, headers };
}

export function registerProblemHandlers(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const { problem, headers } = problemOf(err, request, reply);
    return sendProblem(reply, problem, headers);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, makeProblem('not_found', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
