// Every call the console makes goes through here: the public /api/v1 API, same-origin, with the
// session cookie (never an API key: the browser does not hold one). A change (any method but GET)
// carries X-Hallmark-Console: 1, which the gateway requires of cookie-authenticated changes (CSRF).

import { type RetryPolicy, sendWithRetries } from './retry.ts';

/** A failed call, as the API's error envelope said it ({ error: { code, message, details } }). */
export class ApiError extends Error {
  /** How many times the request was sent, when it was sent again (retry.ts). */
  tries = 1;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** The answer's Retry-After, in seconds, when it had one. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Retry-After as seconds (only the delay form; the API never sends a date), or undefined. */
function retryAfterOf(response: Response): number | undefined {
  const text = response.headers.get('retry-after');
  return text !== null && /^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** `/keys` + { limit: 20, cursor: undefined } → `/keys?limit=20`: empty values are left out. */
export function withQuery(path: string, query: Query = {}): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    parameters.set(name, String(value));
  }
  const text = parameters.toString();
  return text ? `${path}?${text}` : path;
}

/** The API's own address of a path (for links and images: QR codes, the JWKS). */
export const apiUrl = (path: string, query?: Query) => withQuery(`/api/v1${path}`, query);

let onSessionEnded: (error: ApiError) => void = () => {};

/** Called when any call answers 401: the session ended (signed out elsewhere, expired, or its key revoked). */
export function whenSessionEnds(handler: (error: ApiError) => void): void {
  onSessionEnded = handler;
}

interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** The sign-in call: its 401 is a wrong key, not an ended session. */
  signingIn?: boolean;
}

async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (method !== 'GET' && method !== 'HEAD') headers['x-hallmark-console'] = '1';
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'The API could not be reached. Check the connection and try again.');
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const envelope = (parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined)
      ?.error;
    const error = new ApiError(
      response.status,
      envelope?.code ?? `HTTP_${response.status}`,
      envelope?.message ?? `The API answered ${response.status} ${response.statusText}.`,
      envelope?.details ?? {},
      retryAfterOf(response),
    );
    if (response.status === 401 && !options.signingIn) onSessionEnded(error);
    throw error;
  }
  return parsed as T;
}

/**
 * A fresh Idempotency-Key: a random UUID (version 4), from getRandomValues, which browsers offer on
 * plain http:// too (crypto.randomUUID only in secure contexts: https or localhost), where an
 * operator may serve the console on a private address.
 */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What a call threw, as an ApiError (anything else is the console's own failure). */
export const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, 'CONSOLE_ERROR', error instanceof Error ? error.message : String(error));

export const api = {
  get: <T>(path: string, query?: Query) => call<T>('GET', withQuery(path, query)),
  post: <T>(path: string, body?: unknown, options: Omit<CallOptions, 'body'> = {}) =>
    call<T>('POST', path, { ...options, body: body ?? {} }),
  /**
   * A POST that makes something (a code, a key, a new secret, an endpoint, a block): sent with a
   * fresh Idempotency-Key, and sent again with that key while its answer may have been lost
   * (retry.ts). The API answers such a retry with what the first request made, so a lost answer
   * never makes a second one, nor loses a secret shown once. A 5xx is sent again only with
   * `serverErrors: true`, for the routes whose retry finds what a first try made (codes).
   */
  create: <T>(path: string, body?: unknown, policy: RetryPolicy = { serverErrors: false }) => {
    const headers = { 'idempotency-key': newIdempotencyKey() };
    return sendWithRetries(() => call<T>('POST', path, { body: body ?? {}, headers }), asApiError, policy);
  },
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, { body }),
  delete: <T>(path: string) => call<T>('DELETE', path),
};
