/**
 * `new Hallmark({ apiKey })`: one method per operation of the API, grouped by area
 * (operation-names.ts). Each call: retries with backoff (retry.ts), one Idempotency-Key
 * for all of its attempts on the operations that take one, a body built afresh per attempt
 * (request.ts), a timeout per attempt, the caller's AbortSignal, errors as classes (errors.ts). The
 * exchange itself is a transport's (transport.ts: fetch; node-transport.ts: node:http, Node's default).
 */
import { APIPromise, PagePromise, type WithResponse } from './api-promise.ts';
import {
  APIConnectionError,
  type APIError,
  APITimeoutError,
  APIUserAbortError,
  errorFromResponse,
  HallmarkError,
  InvalidResponseError,
} from './errors.ts';
import { type OperationId, operationTable } from './generated/operations.ts';
import { nodeTransport, runsOnNode } from './node-transport.ts';
import type { OperationInfo } from './operation-info.ts';
import { type OperationTree, operationNames } from './operation-names.ts';
import { requestBody, requestUrl } from './request.ts';
import { asksTooLongAWait, isRetryableStatus, isSafeToRepeat, retryDelayMs } from './retry.ts';
import { connectionNeverMade, fetchTransport, type HttpAnswer, type Transport } from './transport.ts';
import type { PagedOperationId, PageItem, Params, RequestOptions, Result } from './types.ts';

export const sdkVersion = '0.1.0';

/** The largest answer a call reads unless told otherwise: 256 MiB. */
const defaultMaxResponseBytes = 256 * 1024 * 1024;

export interface HallmarkOptions {
  /** The API key (`svc_live_…` or `svc_test_…`), sent as `x-api-key`. Public operations work without one. */
  apiKey?: string;
  /** Where the API is, e.g. `https://api.example.com` (no `/api/v1`: the paths carry it). */
  baseUrl: string;
  /** Milliseconds each attempt may take, the answer's body included. Default 60,000. */
  timeout?: number;
  /** Retries after the first attempt of a call. Default 2. */
  maxRetries?: number;
  /**
   * The fetch to send every request with (a test's, or one with a custom agent). Default: in Node,
   * `node:http` with a keep-alive agent (several times cheaper a request than Node's fetch; uploads
   * still go over the global fetch); elsewhere, the global fetch.
   */
  fetch?: typeof fetch;
  /** Headers sent on every request. */
  defaultHeaders?: Record<string, string>;
  /**
   * The largest answer a call reads, in bytes. Default 256 MiB: a larger answer (a misdirected
   * `baseUrl`, a hostile server streaming without end) fails the call with `APIResponseTooLargeError`
   * rather than filling the process's memory. A scans or compliance export as CSV of millions of rows
   * can be larger: give that call its own (`RequestOptions.maxResponseBytes`).
   */
  maxResponseBytes?: number;
}

// biome-ignore lint/complexity/noBannedTypes: `{} extends P` asks whether every member of P is optional
type AllOptional<P> = {} extends P ? true : false;
type Method<K extends OperationId> =
  AllOptional<Params<K>> extends true
    ? (params?: Params<K>, options?: RequestOptions) => CallResult<K>
    : (params: Params<K>, options?: RequestOptions) => CallResult<K>;

/** What a method returns: a PagePromise for a cursor-paged list, an APIPromise otherwise. */
export type CallResult<K extends OperationId> = K extends PagedOperationId
  ? // biome-ignore lint/suspicious/noExplicitAny: a paged list's answer has `pagination`; the generic only checks that
    PagePromise<Result<K> & { pagination: any }, PageItem<K>>
  : APIPromise<Result<K>>;

/** The methods of a branch of operation-names.ts. */
export type Resources<T> = {
  readonly [Name in keyof T]: T[Name] extends OperationId ? Method<T[Name]> : Resources<T[Name]>;
};

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError('The call was aborted.'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError('The call was aborted.'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** A fresh Idempotency-Key for one call, kept for all of its attempts. */
function newIdempotencyKey(): string {
  return `hallmark-sdk-${globalThis.crypto.randomUUID()}`;
}

type Attempt =
  | { kind: 'answer'; answer: HttpAnswer; data: unknown }
  | { kind: 'error'; error: APIError; retryable: boolean }
  /** `sent`: the request may have reached the API (false only when no connection was made). */
  | { kind: 'no-answer'; error: APIConnectionError; sent: boolean };

/** How a call's attempts are sent and retried; the same for all of them. */
interface Sending {
  /** The Idempotency-Key sent on every attempt (a caller's is sent even where the operation ignores it). */
  idempotencyKey: string | undefined;
  /** The operation keeps the first answer of a key: the key makes a retry safe. */
  keyHonoured: boolean;
  /** Sending it again cannot do twice what it asks (retry.ts): else retried only when the API did nothing. */
  safeToRepeat: boolean;
}

export interface Hallmark extends Resources<typeof operationNames> {}

/**
 * The Hallmark API client.
 *
 * ```ts
 * const hallmark = new Hallmark({ apiKey: process.env.HALLMARK_API_KEY, baseUrl: 'http://localhost:3000' });
 * const result = await hallmark.codes.verify({ url });
 * for await (const key of hallmark.keys.list({ limit: 100 })) console.log(key.id);
 * ```
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above types the methods the constructor attaches
export class Hallmark {
  readonly baseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly maxResponseBytes: number;
  readonly #apiKey: string | undefined;
  readonly #transport: Transport;
  readonly #defaultHeaders: Record<string, string>;

  constructor(options: HallmarkOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '') {
      throw new HallmarkError('new Hallmark({ baseUrl }) needs the API’s base URL, e.g. "https://api.example.com".');
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeout = options.timeout ?? 60_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.maxResponseBytes = options.maxResponseBytes ?? defaultMaxResponseBytes;
    this.#apiKey = options.apiKey;
    const chosenFetch = options.fetch ?? globalThis.fetch;
    if (typeof chosenFetch !== 'function') throw new HallmarkError('No fetch: pass `fetch` to new Hallmark({ … }).');
    const overFetch = fetchTransport(options.fetch ?? ((input, init) => globalThis.fetch(input, init)));
    this.#transport = options.fetch === undefined && runsOnNode ? nodeTransport(overFetch) : overFetch;
    this.#defaultHeaders = lowerCaseNames(options.defaultHeaders) ?? {};
    Object.assign(this, this.#resources(operationNames));
  }

  #resources(tree: OperationTree): Record<string, unknown> {
    return Object.fromEntries(
      Object.entries(tree).map(([name, entry]) => [
        name,
        typeof entry === 'string'
          ? (params?: Record<string, unknown>, options?: RequestOptions) => this.call(entry, params as never, options)
          : Object.freeze(this.#resources(entry)),
      ]),
    );
  }

  /** Calls an operation by its operationId: what every method does (`codes.verify` is `call('verifyCode', …)`). */
  call<K extends OperationId>(operationId: K, params?: Params<K>, options: RequestOptions = {}): CallResult<K> {
    const info: OperationInfo | undefined = operationTable[operationId];
    if (!info) throw new HallmarkError(`Unknown operation ${String(operationId)}.`);
    const given = (params ?? {}) as Record<string, unknown>;
    const answer = this.#send(info, given, options);
    if (info.pageItems === null) return new APIPromise(answer) as unknown as CallResult<K>;
    // biome-ignore lint/suspicious/noExplicitAny: the page's type is the operation's answer; checked by CallResult
    const first = answer as Promise<WithResponse<any>>;
    const nextPage = (cursor: string) =>
      // biome-ignore lint/suspicious/noExplicitAny: as above
      new APIPromise(this.#send(info, { ...given, cursor }, options)) as APIPromise<any>;
    const firstCursor = typeof given.cursor === 'string' ? given.cursor : undefined;
    return new PagePromise(first, info.pageItems, nextPage, firstCursor) as unknown as CallResult<K>;
  }

  async #send(info: OperationInfo, params: Record<string, unknown>, options: RequestOptions): Promise<WithResponse<never>> {
    const url = requestUrl(this.baseUrl, info, params);
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const idempotencyKey = options.idempotencyKey ?? (info.idempotent ? newIdempotencyKey() : undefined);
    const keyHonoured = info.idempotent && idempotencyKey !== undefined;
    const sending: Sending = { idempotencyKey, keyHonoured, safeToRepeat: isSafeToRepeat(info.method, info.path, keyHonoured) };
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.#attempt(info, url, params, options, sending);
      if (outcome.kind === 'answer') {
        const answer = outcome.answer;
        // The Response is made only for a caller who asks for it (withResponse): node:http answers have none.
        return {
          data: outcome.data as never,
          get response() {
            return answer.response;
          },
          requestId: answer.header('x-request-id') ?? undefined,
        };
      }
      // A request that never left is safe to send again, whatever it asks.
      const retryable = outcome.kind === 'no-answer' ? sending.safeToRepeat || !outcome.sent : outcome.retryable;
      if (!retryable || attempt >= maxRetries) throw outcome.error;
      const headers = outcome.kind === 'error' ? outcome.error.headers : undefined;
      await sleep(retryDelayMs(attempt + 1, headers), options.signal);
    }
  }

  /** One HTTP exchange, the answer's body read within the same timeout. */
  async #attempt(
    info: OperationInfo,
    url: string,
    params: Record<string, unknown>,
    options: RequestOptions,
    sending: Sending,
  ): Promise<Attempt> {
    const { idempotencyKey } = sending;
    if (options.signal?.aborted) throw new APIUserAbortError('The call was aborted.');
    const { body, contentType } = requestBody(info, params);
    const headers: Record<string, string> = { accept: info.response === 'json' ? 'application/json' : '*/*' };
    if (this.#apiKey !== undefined) headers['x-api-key'] = this.#apiKey;
    if (contentType) headers['content-type'] = contentType;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    Object.assign(headers, this.#defaultHeaders, lowerCaseNames(options.headers));

    let answer: HttpAnswer;
    try {
      answer = await this.#transport({
        url,
        method: info.method,
        headers,
        body,
        redirect: info.redirects ? 'manual' : 'follow',
        timeoutMs: options.timeout ?? this.timeout,
        maxResponseBytes: options.maxResponseBytes ?? this.maxResponseBytes,
        signal: options.signal,
      });
    } catch (cause) {
      if (cause instanceof APIUserAbortError) throw cause;
      if (cause instanceof APITimeoutError) return { kind: 'no-answer', error: cause, sent: true };
      if (cause instanceof HallmarkError) throw cause;
      const reason =
        cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
      const error = new APIConnectionError(`No answer from ${this.baseUrl}: ${reason}`, { cause });
      return { kind: 'no-answer', error, sent: !connectionNeverMade(cause) };
    }
    const status = answer.status;
    const succeeded = (status >= 200 && status < 300) || (info.redirects && status >= 300 && status < 400);
    if (!succeeded) {
      const error = errorFromResponse(status, answer.headers, decoder.decode(answer.body));
      const retryable =
        isRetryableStatus(status, answer.headers, sending.keyHonoured, sending.safeToRepeat) && !asksTooLongAWait(answer.headers);
      return { kind: 'error', error, retryable };
    }
    return { kind: 'answer', answer, data: readData(info, answer) };
  }
}

const decoder = new TextDecoder();

/** Header names as the transports send them (fetch would lower-case them itself; node:http keeps two spellings apart). */
function lowerCaseNames(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  const lowered: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) lowered[name.toLowerCase()] = value;
  return lowered;
}

/**
 * The answer's data: parsed JSON (text when a list or an export was asked for as CSV), text, bytes,
 * or nothing. An operation that answers JSON and gets something that does not parse as JSON (a
 * proxy's or a captive portal's HTML page with 200) throws `InvalidResponseError`: that page is not
 * the data. JSON is read whatever type it is labelled with, as the Python client reads it.
 */
function readData(info: OperationInfo, answer: HttpAnswer): unknown {
  if (info.response === 'json') {
    if (answer.body.length === 0) return undefined;
    const text = decoder.decode(answer.body);
    // `scans.list` and `compliance.export` answer text/csv when asked for CSV (`format`, Accept).
    if (/^text\/csv\b/i.test(answer.header('content-type') ?? '')) return text;
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw notJson(info, answer, cause);
    }
  }
  if (info.response === 'text') return decoder.decode(answer.body);
  // A copy: a node:http answer's bytes may be a view of a larger shared buffer.
  if (info.response === 'binary') return new Uint8Array(answer.body);
  return undefined;
}

function notJson(info: OperationInfo, answer: HttpAnswer, cause: unknown): InvalidResponseError {
  const type = answer.header('content-type')?.split(';')[0] ?? 'no content type';
  const error = new InvalidResponseError({
    message: `The answer to ${info.method} ${info.path} (${type}) is not the JSON this operation answers.`,
    status: answer.status,
    headers: answer.headers,
    requestId: answer.header('x-request-id') ?? undefined,
  });
  error.cause = cause;
  return error;
}
