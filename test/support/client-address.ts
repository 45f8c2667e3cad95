import { request } from 'node:http';
import type { ApiResponse } from './embedded.ts';

// Per-address limits (public routes, failed authentications, reports, the resolver's reload
// window) count by the client's address. The embedded form's tests move its clock to a fresh
// window; the distributed form's clock is the machine's, so a test there sends from a loopback
// address of its own instead (Linux routes all of 127.0.0.0/8 to lo: a socket bound to
// 127.N.0.1 reaches the product on 127.0.0.1 and the product sees 127.N.0.1). Each is in a /24 of
// its own, so the risk rules (which count an IPv4 /24 as one client: riskClientOf) see another
// client too.

let last = 1;

/** A loopback address in a /24 of its own (127.2.0.1, 127.3.0.1, …) this test file has not sent from before. */
export function newClientAddress(): string {
  last += 1;
  if (last > 254) throw new Error('out of loopback client addresses (127.2.0.1-127.254.0.1)');
  return `127.${last}.0.1`;
}

export interface AddressedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * `fetch` from the given local address (node:http, as fetch cannot bind one). With `follow`, a
 * redirect is followed from the same address, as a phone follows the printed link's 307 (at most 5).
 */
export async function fetchFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer; follow?: boolean } = {},
): Promise<AddressedResponse> {
  let response = await fetchOnce(localAddress, url, init);
  for (let hops = 0; init.follow && hops < 5 && response.status >= 301 && response.status <= 308; hops++) {
    const location = response.headers.get('location');
    if (!location) break;
    response = await fetchOnce(localAddress, new URL(location, url).toString(), init);
  }
  return response;
}

function fetchOnce(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<AddressedResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? 'GET',
        headers: init.headers,
        localAddress,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          resolve({ status: response.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(init.body);
  });
}

/** `call` (a JSON request to the API; `key` goes in x-api-key) from the given local address. */
export async function callFrom<T = Record<string, unknown>>(
  localAddress: string,
  url: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const response = await fetchFrom(localAddress, `${url}${path}`, {
    method,
    headers: {
      ...(options.key ? { 'x-api-key': options.key } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (response.text ? JSON.parse(response.text) : {}) as ApiResponse<T>['body'],
  };
}

/**
 * Waits until a fixed window of `windowMs` (a rate limit's second, minute or day) has at least
 * `neededMs` left, and then until `startMs` into it, so a test whose requests must fall in one
 * window starts early in it. Answers the window's number (floor(now / windowMs)). `now` is the
 * product's clock in ms (an embedded test product's moves with an offset); the machine's by default.
 */
export async function earlyInWindow(
  windowMs: number,
  neededMs: number,
  startMs = 20,
  now: () => number = Date.now,
): Promise<number> {
  const into = now() % windowMs;
  if (into < startMs) await sleep(startMs - into);
  else if (windowMs - into < neededMs) await sleep(windowMs - into + startMs);
  return Math.floor(now() / windowMs);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
