/**
 * One HTTP exchange, as the client needs it: the request goes out, the whole answer comes back within
 * the attempt's timeout, or the exchange fails with an error the client can tell apart (the caller's
 * abort, the timeout, or anything else: no answer). Two transports: `fetch` (browsers, and any fetch
 * given to the client) here, and `node:http` (Node, by default) in node-transport.ts.
 */
import { APIResponseTooLargeError, APITimeoutError, APIUserAbortError } from './errors.ts';

export interface HttpRequest {
  url: string;
  method: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: RequestInit['body'] | undefined;
  /** `manual`: a 3xx is the answer (a resolver's redirect), not followed. */
  redirect: 'follow' | 'manual';
  /** Milliseconds the exchange may take, the answer's body included. */
  timeoutMs: number;
  /** The largest answer body read, in bytes: a larger one fails the exchange (APIResponseTooLargeError). */
  maxResponseBytes: number;
  signal: AbortSignal | undefined;
}

/** An answer with its body read whole. */
export interface HttpAnswer {
  readonly status: number;
  /** One header's value (the name in lower case), or null. */
  header(name: string): string | null;
  /** The headers as a fetch `Headers` (made when first asked for). */
  readonly headers: Headers;
  readonly body: Uint8Array;
  /** The answer as a fetch `Response`, its body already read (made when first asked for). */
  readonly response: Response;
}

/**
 * Sends one request. Throws `APIUserAbortError` when the caller's signal aborted it, `APITimeoutError`
 * when `timeoutMs` passed first, anything else when no answer came (a refused or reset connection).
 */
export type Transport = (request: HttpRequest) => Promise<HttpAnswer>;

/**
 * Error codes only a connection attempt raises (Node's and undici's): a refused connection, a name
 * that does not resolve, no connection within undici's connect timeout. Not a reset or a timeout,
 * which may come after the request went out.
 */
const connectionNotMadeCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * True when a transport's failure says no connection was made, so the request never left and the
 * API did nothing with it. fetch wraps the reason (`TypeError: fetch failed`, its cause the
 * socket's error); a browser's fetch says nothing, and is taken as maybe sent.
 */
export function connectionNeverMade(error: unknown): boolean {
  for (let reason = error, depth = 0; reason instanceof Error && depth < 4; reason = reason.cause, depth++) {
    const code = (reason as { code?: unknown }).code;
    if (typeof code === 'string' && connectionNotMadeCodes.has(code)) return true;
  }
  return false;
}

/** The error of an answer past the request's `maxResponseBytes`. */
export const tooLargeError = (request: HttpRequest) =>
  new APIResponseTooLargeError(
    `The answer is larger than ${request.maxResponseBytes} bytes (maxResponseBytes); it was not read. Give this call a larger maxResponseBytes.`,
  );

/** Whether the answer's Content-Length alone says it is past the request's `maxResponseBytes`. */
export function declaredTooLarge(request: HttpRequest, contentLength: string | string[] | null | undefined): boolean {
  return typeof contentLength === 'string' && Number(contentLength) > request.maxResponseBytes;
}

/** The error of an exchange that ran past its `timeoutMs`. */
export const timeoutError = (request: HttpRequest, cause?: unknown) =>
  new APITimeoutError(`No answer within ${request.timeoutMs} ms.`, cause === undefined ? undefined : { cause });

/**
 * Over `fetch`: a signal of its own per exchange, aborted by the timer or by the caller's signal.
 * Never follows a redirect, as the Node transport does not: `fetch` would send the request's headers,
 * the API key among them, on to wherever a 3xx pointed (it drops only `Authorization` when the origin
 * changes), so a hostile proxy or a hijacked host could collect the key. A 3xx is the answer: the
 * operations that redirect return it, any other raises HTTP_3xx (a browser's opaque redirect: HTTP_0).
 */
export function fetchTransport(fetchFunction: typeof fetch): Transport {
  return async (request) => {
    const userSignal = request.signal;
    if (userSignal?.aborted) throw new APIUserAbortError('The call was aborted.');
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, request.timeoutMs);
    const onUserAbort = () => controller.abort();
    userSignal?.addEventListener('abort', onUserAbort, { once: true });
    try {
      const response = await fetchFunction(request.url, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal: controller.signal,
        redirect: 'manual',
      });
      const body = await bodyOf(response, request);
      return {
        status: response.status,
        header: (name) => response.headers.get(name),
        headers: response.headers,
        body,
        response,
      };
    } catch (cause) {
      if (userSignal?.aborted) throw new APIUserAbortError('The call was aborted.', { cause });
      if (timedOut) throw timeoutError(request, cause);
      throw cause;
    } finally {
      clearTimeout(timer);
      userSignal?.removeEventListener('abort', onUserAbort);
    }
  };
}

/**
 * A fetch answer's body, read chunk by chunk and given up past `maxResponseBytes` (the bytes counted
 * are those fetch gives, after any Content-Encoding is undone; a declared length past the limit is
 * refused before reading).
 */
async function bodyOf(response: Response, request: HttpRequest): Promise<Uint8Array> {
  const contentLength = response.headers.get('content-length');
  if (declaredTooLarge(request, contentLength)) {
    await response.body?.cancel().catch(() => {});
    throw tooLargeError(request);
  }
  if (!response.body) return new Uint8Array(0);
  // Counted as it comes, whatever the declared length: a compressed answer's Content-Length is that of
  // the bytes sent, and fetch inflates them (a gzip answer of a few KiB can be gigabytes once inflated).
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.length;
    if (length > request.maxResponseBytes) {
      await reader.cancel().catch(() => {});
      throw tooLargeError(request);
    }
    chunks.push(value);
  }
  return concatBytes(chunks, length);
}

/** Chunks as one array (the chunk itself when there is one). */
export function concatBytes(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const whole = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.length;
  }
  return whole;
}
