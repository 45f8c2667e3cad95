/**
 * `new Hallmark({ apiKey })`: one method per operation of the API, grouped by area
 * (operation-names.ts), over `fetch`. Each call: retries with backoff (retry.ts), one Idempotency-Key
 * for all of its attempts on the operations that take one, a body built afresh per attempt
 * (request.ts), a timeout per attempt, the caller's AbortSignal, errors as classes (errors.ts).
 */
import { APIPromise, PagePromise, type WithResponse } from './api-promise.ts';
import {
  APIConnectionError,
  type APIError,
  APITimeoutError,
  APIUserAbortError,
  errorFromResponse,
  HallmarkError,
} from './errors.ts';
import { type OperationId, operationTable } from './generated/operations.ts';
import type { OperationInfo } from './operation-info.ts';
import { type OperationTree, operationNames } from './operation-names.ts';
import { requestBody, requestUrl } from './request.ts';
import { asksTooLongAWait, isRetryableStatus, retryDelayMs } from './retry.ts';
import type { PagedOperationId, PageItem, Params, RequestOptions, Result } from './types.ts';

export const sdkVersion = '0.1.0';

export interface HallmarkOptions {
  /** The API key (`svc_live_…` or `svc_test_…`), sent as `x-api-key`. Public operations work without one. */
  apiKey?: string;
  /** Where the API is, e.g. `https://api.example.com` (no `/api/v1`: the paths carry it). */
  baseUrl: string;
  /** Milliseconds each attempt may take, the answer's body included. Default 60,000. */
  timeout?: number;
  /** Retries after the first attempt of a call. Default 2. */
  maxRetries?: number;
  /** The fetch to use (a test's, or one with a custom agent). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Headers sent on every request. */
  defaultHeaders?: Record<string, string>;
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
  | { kind: 'answer'; response: Response; data: unknown }
  | { kind: 'error'; error: APIError; retryable: boolean }
  | { kind: 'no-answer'; error: APIConnectionError };

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
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #defaultHeaders: Record<string, string>;

  constructor(options: HallmarkOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '') {
      throw new HallmarkError('new Hallmark({ baseUrl }) needs the API’s base URL, e.g. "https://api.example.com".');
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeout = options.timeout ?? 60_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.#apiKey = options.apiKey;
    const chosenFetch = options.fetch ?? globalThis.fetch;
    if (typeof chosenFetch !== 'function') throw new HallmarkError('No fetch: pass `fetch` to new Hallmark({ … }).');
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#defaultHeaders = { ...options.defaultHeaders };
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
    return new PagePromise(first, info.pageItems, nextPage) as unknown as CallResult<K>;
  }

  async #send(info: OperationInfo, params: Record<string, unknown>, options: RequestOptions): Promise<WithResponse<never>> {
    const url = requestUrl(this.baseUrl, info, params);
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const idempotencyKey = info.idempotent ? (options.idempotencyKey ?? newIdempotencyKey()) : undefined;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.#attempt(info, url, params, options, idempotencyKey);
      if (outcome.kind === 'answer') {
        const response = outcome.response;
        return { data: outcome.data as never, response, requestId: response.headers.get('x-request-id') ?? undefined };
      }
      const retryable = outcome.kind === 'no-answer' || outcome.retryable;
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
    idempotencyKey: string | undefined,
  ): Promise<Attempt> {
    const userSignal = options.signal;
    if (userSignal?.aborted) throw new APIUserAbortError('The call was aborted.');
    const { body, contentType } = requestBody(info, params);
    const headers: Record<string, string> = { accept: info.response === 'json' ? 'application/json' : '*/*' };
    if (this.#apiKey !== undefined) headers['x-api-key'] = this.#apiKey;
    if (contentType) headers['content-type'] = contentType;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    Object.assign(headers, this.#defaultHeaders, options.headers);

    const controller = new AbortController();
    let timedOut = false;
    const timeoutMs = options.timeout ?? this.timeout;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onUserAbort = () => controller.abort();
    userSignal?.addEventListener('abort', onUserAbort, { once: true });
    try {
      const response = await this.#fetch(url, {
        method: info.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: controller.signal,
        ...(info.redirects ? { redirect: 'manual' as const } : {}),
      });
      const succeeded = response.ok || (info.redirects && response.status >= 300 && response.status < 400);
      if (!succeeded) {
        const text = await response.text();
        const error = errorFromResponse(response.status, response.headers, text);
        const retryable =
          isRetryableStatus(response.status, response.headers, idempotencyKey !== undefined) &&
          !asksTooLongAWait(response.headers);
        return { kind: 'error', error, retryable };
      }
      return { kind: 'answer', response, data: await readData(info, response) };
    } catch (cause) {
      if (userSignal?.aborted) throw new APIUserAbortError('The call was aborted.', { cause });
      if (timedOut) {
        return { kind: 'no-answer', error: new APITimeoutError(`No answer within ${timeoutMs} ms.`, { cause }) };
      }
      if (cause instanceof HallmarkError) throw cause;
      if (cause instanceof SyntaxError) {
        throw new HallmarkError(`The answer to ${info.method} ${info.path} is not the JSON it should be.`, { cause });
      }
      const reason =
        cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
      return { kind: 'no-answer', error: new APIConnectionError(`No answer from ${this.baseUrl}: ${reason}`, { cause }) };
    } finally {
      clearTimeout(timer);
      userSignal?.removeEventListener('abort', onUserAbort);
    }
  }
}

async function readData(info: OperationInfo, response: Response): Promise<unknown> {
  if (info.response === 'json') {
    const text = await response.text();
    if (text === '') return undefined;
    // A list asked for as CSV (`format: 'csv'`) answers text; JSON is parsed.
    const type = response.headers.get('content-type') ?? 'application/json';
    return type.includes('json') ? JSON.parse(text) : text;
  }
  if (info.response === 'text') return response.text();
  if (info.response === 'binary') return new Uint8Array(await response.arrayBuffer());
  await response.body?.cancel();
  return undefined;
}
