import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { HallmarkError } from '@hallmark/contracts';
import { firstRoundedInteger } from '@hallmark/provenance';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from './config.ts';
import { errorEnvelope } from './error-envelope.ts';

/**
 * What the gateway refuses in any request before a handler or a service sees it (issue #16):
 * JSON nested deeper than {@link maxJsonDepth}, text no service can store (U+0000, which
 * PostgreSQL refuses with 22021, and lone UTF-16 surrogates, which are not Unicode text and turn into
 * U+FFFD or a failure depending on who encodes them), numbers JSON cannot carry (1e999 parses as
 * Infinity, which would be stored as null), and whole numbers it does not carry alike (a literal
 * past 2^53 read as a neighbouring double, see firstRoundedInteger). Everything refused is a 400 VALIDATION_ERROR
 * naming the field, never a 500 further in.
 */

/**
 * Objects and arrays inside one another, counting the body itself as 1. No request of the API comes
 * near it (metadata nests a few levels); 4,000 levels made Ajv and JSON.stringify overflow the stack.
 */
export const maxJsonDepth = 64;

// U+0000, a high surrogate not followed by a low one, or a low one not preceded by a high one.
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what this looks for
const unstorableText = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

type Location = 'body' | 'querystring' | 'params';

interface Refusal {
  field: string;
  message: string;
}

function describeText(text: string): string | undefined {
  const found = unstorableText.exec(text);
  if (!found) return undefined;
  return found[0] === '\u0000' ? 'contains U+0000 (NUL)' : 'contains a lone UTF-16 surrogate (not Unicode text)';
}

/**
 * The first thing in `value` the API cannot take, with its path in the form validation errors use
 * (`items.3.metadata.name`), or undefined. Walks with its own stack, so depth cannot overflow ours.
 */
export function findUnacceptableInput(value: unknown, root = ''): Refusal | undefined {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 0 }];
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop() as { value: unknown; path: string; depth: number };
    if (typeof current === 'string') {
      const problem = describeText(current);
      if (problem) return { field: path, message: problem };
      continue;
    }
    // 1e999 parses as Infinity, which JSON cannot carry on: it would be stored as null.
    if (typeof current === 'number' && !Number.isFinite(current)) {
      return { field: path, message: 'is a number too large to store (only finite numbers)' };
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > maxJsonDepth) {
      return { field: path, message: `nests objects and arrays deeper than ${maxJsonDepth} levels` };
    }
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        pending.push({ value: current[index], path: join(path, String(index)), depth: depth + 1 });
      }
      continue;
    }
    const keys = Object.keys(current);
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index] as string;
      const keyProblem = describeText(key);
      if (keyProblem) return { field: join(path, JSON.stringify(key).slice(1, -1)), message: `has a name that ${keyProblem}` };
      pending.push({ value: (current as Record<string, unknown>)[key], path: join(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}

function refuse(refusal: Refusal, location: Location): HallmarkError {
  const field = refusal.field || (location === 'body' ? 'body' : location);
  return new HallmarkError('VALIDATION_ERROR', `Invalid request: check ${field}.`, {
    fields: [{ field, in: location, message: refusal.message }],
  });
}

/** RFC 2046: a multipart boundary is 1 to 70 characters; the parser fails on anything else. */
const multipartBoundary = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i;

/**
 * Checks every request's path parameters, query and parsed body (JSON or form) in preValidation,
 * before the routes' schemas and before any quota is spent; and a multipart request's boundary,
 * which the multipart parser would otherwise throw on as an unexpected error. After the answer, the
 * unread rest of a body is discarded so that its connection goes on.
 */
export function installInputLimits(app: FastifyInstance): void {
  // fastify's own JSON parser (secure-json-parse, refusing __proto__ and constructor keys), then the
  // text's whole numbers: 90071992547409921 parses as ...920, and stored so the client's number
  // would change without a word (and an export holding it read otherwise by exact readers).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    parseJson(request, text, (error, value) => {
      if (error) return done(error);
      const rounded = firstRoundedInteger(text);
      if (!rounded) return done(null, value);
      done(
        refuse(
          {
            // Bounded: a path 150,000 levels deep made an answer of 600 KB (the depth is refused after parsing).
            field: rounded.path.slice(0, 200),
            message: `is the whole number ${rounded.literal.slice(0, 40)}, which JSON readers take for different values (past 2^53 a number is read as the nearest double): send it as a string`,
          },
          'body',
        ),
      );
    });
  });
  // A body is taken as it is sent: a Content-Encoding (gzip, br, deflate…) is not undone. Read as
  // the plain text it held, a body declared gzip was acted on, while a proxy or a filter in front
  // that decodes what it inspects saw something else (or nothing it could read). So a body in any
  // coding but identity is 415 before it is read, with `Accept-Encoding: identity` (RFC 9110,
  // 15.5.16), as a body of a type no parser takes is.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const coding = request.headers['content-encoding'];
    if (coding === undefined || !hasBody(request) || isIdentity(coding)) return done(null, payload);
    reply.header('accept-encoding', 'identity');
    done(
      new HallmarkError(
        'UNSUPPORTED_MEDIA_TYPE',
        `A body in a content coding (Content-Encoding: ${coding.slice(0, 40)}) is not accepted: send it unencoded.`,
        { fields: [{ field: 'content-encoding', in: 'headers', message: 'must be absent or identity' }] },
      ),
    );
  });
  app.addHook('preValidation', async (request) => {
    const parts: Array<[Location, unknown]> = [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ];
    for (const [location, value] of parts) {
      if (value === undefined || value === null) continue;
      const refusal = findUnacceptableInput(value);
      if (refusal) throw refuse(refusal, location);
    }
    const contentType = request.headers['content-type'];
    if (typeof contentType === 'string' && /^\s*multipart\//i.test(contentType) && !multipartBoundary.test(contentType)) {
      throw new HallmarkError('VALIDATION_ERROR', 'The multipart Content-Type has no valid boundary (1 to 70 characters).', {
        fields: [{ field: 'content-type', in: 'headers', message: 'needs a boundary parameter of 1 to 70 characters' }],
      });
    }
  });
  // A parser that stops reading a body partway (the multipart one at its limit of files or fields)
  // leaves the rest unread and the request paused, and Node reads nothing more from that connection:
  // the next request a client sends on it would wait forever. Once the answer is sent, the rest is
  // read and discarded, as Node does for a body nobody started to read; the request timeout
  // (HALLMARK_HTTP_REQUEST_TIMEOUT_MS) still bounds how long that may take.
  app.addHook('onResponse', async (request) => {
    if (!request.raw.complete) request.raw.resume();
  });
}

/** Whether the request carries a body (a length above 0, or chunks), which only then has a coding. */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** `identity` (any case, listed once or more): the body as it is. */
function isIdentity(coding: string): boolean {
  return coding.split(',').every((name) => name.trim().toLowerCase() === 'identity');
}

/**
 * Fastify answers a few failures before routing (a path whose percent-encoding is not UTF-8, an
 * over-long path parameter) with a body of its own; these give the API's envelope instead.
 */
function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  answerAsPage: UnroutedPage | undefined,
): void {
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The URL is not valid: a percent-encoded part of its path is not UTF-8.'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'A part of the URL path is longer than this API accepts.'
        : 'The request could not be routed.';
  // Answered before the route's hooks run, so the headers every answer carries are set here too.
  reply
    .status(400)
    .header('x-request-id', request.id)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store');
  const refusal = new HallmarkError('VALIDATION_ERROR', message);
  if (answerAsPage?.(refusal, request, reply)) return;
  reply.send(errorEnvelope(refusal, request.id));
}

/**
 * What Node's HTTP parser refuses before there is a request (headers over 16 KB, a malformed request
 * line, a client too slow for the timeouts below) is answered in the envelope too, then closed.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || !socket.writable) {
    socket.destroy();
    return;
  }
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new HallmarkError(
          'REQUEST_HEADERS_TOO_LARGE',
          'The URL and headers together are larger than this server accepts (16 KB).',
        )
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HallmarkError('REQUEST_TIMEOUT', 'The request was not received in time.')
        : new HallmarkError('VALIDATION_ERROR', 'The request is not valid HTTP.');
  socket.end(closingAnswerOf(refusal));
}

/**
 * A refusal in the envelope, then the connection closed: for what is refused before fastify has a
 * request. The headers every answer carries (docs/API.md): its request id, nosniff, and no-store
 * (whether the unread request had an x-api-key is not known here).
 */
function closingRefusalOf(refusal: HallmarkError): { status: number; headers: Record<string, string>; body: string } {
  const requestId = randomUUID();
  const body = JSON.stringify(errorEnvelope(refusal, requestId));
  return {
    status: refusal.status,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'X-Request-Id': requestId,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    },
    body,
  };
}

/** {@link closingRefusalOf} as the bytes to write straight to a socket. */
function closingAnswerOf(refusal: HallmarkError): string {
  const { status, headers, body } = closingRefusalOf(refusal);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('')}\r\n${body}`;
}

/**
 * What Node's HTTP server answers by itself, with no body and none of the API's headers, answered in
 * the envelope instead: an `Expect` other than `100-continue` (Node: a bare 417; RFC 9110, 10.1.1,
 * lets a server refuse it), an HTTP/1.1 request without `Host` (Node: a bare 400; RFC 9112, 3.2,
 * requires the 400), and `CONNECT` (Node: the connection dropped without a word; this server proxies
 * nothing, so 405). Node answers a request without Host itself unless told not to
 * (`requireHostHeader: false` in {@link hostileClientOptions}); the hook refuses it here.
 */
export function installProtocolRefusals(app: FastifyInstance): void {
  app.server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const refusal = new HallmarkError('VALIDATION_ERROR', 'The only expectation this server meets is Expect: 100-continue.', {
      fields: [{ field: 'expect', in: 'headers', message: 'must be absent or 100-continue' }],
    });
    // Through the response, which Node queues behind the answers of requests pipelined before it
    // (written straight to the socket, it was lost behind them and the connection held open).
    const { status, headers, body } = closingRefusalOf(refusal);
    response.writeHead(status, headers).end(body);
  });
  app.server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    // Pipelined behind a request whose answer is still to come (Node's response in flight on the
    // socket), a 405 written here would reach the client in that answer's place, a definite refusal
    // of work that was done: the connection is dropped instead, as Node drops it, its outcome unknown.
    const answerInFlight = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
    if (!socket.writable || answerInFlight) {
      socket.destroy();
      return;
    }
    const refusal = new HallmarkError('METHOD_NOT_ALLOWED', 'CONNECT is not served: this server is not a proxy.', {
      allowed: [],
    });
    socket.end(closingAnswerOf(refusal));
  });
  // Callback-style: on every request, so no promise of its own.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.headers.host !== undefined || request.raw.httpVersion === '1.0') return done();
    done(
      new HallmarkError('VALIDATION_ERROR', 'An HTTP/1.1 request must send a Host header.', {
        fields: [{ field: 'host', in: 'headers', message: 'is required' }],
      }),
    );
  });
}

/**
 * The HTTP server's options for hostile clients, to spread into `Fastify({...})`: clocks for slow or
 * idle clients (slowloris, a body that never ends; Node checks them every second here instead of
 * every 30 s), and envelopes for what fastify and Node refuse before a route runs.
 */
/**
 * Answers a refusal made before routing as a page, when the request is one whose answers are pages
 * (a printed link's, docs/RESOLVER.md); false to leave it to the envelope.
 */
export type UnroutedPage = (refusal: HallmarkError, request: FastifyRequest, reply: FastifyReply) => boolean;

export function hostileClientOptions(config: GatewayConfig, answerAsPage?: UnroutedPage) {
  const headersTimeout = config.HALLMARK_HTTP_HEADERS_TIMEOUT_MS;
  // Node requires headersTimeout <= requestTimeout when both are set.
  const requestTimeout = Math.max(config.HALLMARK_HTTP_REQUEST_TIMEOUT_MS, headersTimeout);
  return {
    requestTimeout,
    keepAliveTimeout: config.HALLMARK_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: config.HALLMARK_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
      // A request without Host is refused in the envelope (installProtocolRefusals), not by Node's bare 400.
      requireHostHeader: false,
    },
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      answerFrameworkError(error, request, reply, answerAsPage),
    clientErrorHandler: answerClientError,
  };
}
