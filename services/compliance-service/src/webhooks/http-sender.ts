import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type DeliveryTarget, type Lookup, resolveTarget } from './ssrf.ts';

export interface SendResult {
  /** The answer's status, or undefined when none came (refused, reset, timed out). */
  status?: number;
  retryAfterSeconds?: number;
  error?: string;
}

/**
 * Sends one request; never rejects. `timeoutMs` is the attempt's timeout (named in the error),
 * `remainingMs` what is left of it when the request starts (the DNS lookup spent the rest). Tests
 * replace it to see that nothing connects.
 */
export type Send = (
  target: DeliveryTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  remainingMs?: number,
) => Promise<SendResult>;

/** How many bytes of an answer are read (then dropped): receivers need not be read whole. */
const maxAnswerBytes = 64 * 1024;

/**
 * POSTs to the checked address: the socket's `lookup` answers with it, so Node never resolves the
 * host again, while the Host header and TLS's server name (SNI and the certificate check) stay the
 * URL's host. No redirects are followed (a 3xx is a failed attempt). `remainingMs` (by default
 * `timeoutMs`) covers the whole exchange.
 */
export const sendHttp: Send = (target, headers, body, timeoutMs, remainingMs = timeoutMs) =>
  new Promise((resolve) => {
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const client = target.url.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const request = client.request(
      target.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinned,
        agent: false,
      },
      (response) => {
        // The status line decides the attempt: a 2xx acknowledges when it comes, however long the
        // body then takes (read and dropped, at most maxAnswerBytes, until the deadline cuts it).
        finish({ status: response.statusCode ?? 0, retryAfterSeconds: parseRetryAfter(response.headers['retry-after']) });
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > maxAnswerBytes) request.destroy();
        });
        response.on('error', () => {});
      },
    );
    const timer = setTimeout(
      () => {
        request.destroy();
        finish({ error: `timed out after ${timeoutMs} ms` });
      },
      Math.max(0, remainingMs),
    );
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error: NodeJS.ErrnoException) => finish({ error: error.code ?? error.message }));
    request.end(body);
  });

/**
 * One delivery attempt under one deadline: resolving the host (resolveTarget: the SSRF check) and
 * the exchange together take at most `timeoutMs`, so an attempt never outlasts the timeout, nor the
 * claim's lease, which is longer (module.ts checks it). Rejects with RefusedTarget before any
 * connection; otherwise never rejects.
 */
export async function deliverOnce(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { allowPrivate: boolean; lookup: Lookup; send: Send; timeoutMs: number },
): Promise<SendResult> {
  const { timeoutMs } = options;
  const started = performance.now();
  const target = await resolveTarget(url, { allowPrivate: options.allowPrivate, lookup: options.lookup, timeoutMs });
  const remainingMs = Math.floor(timeoutMs - (performance.now() - started));
  if (remainingMs <= 0) return { error: `timed out after ${timeoutMs} ms` };
  return options.send(target, headers, body, timeoutMs, remainingMs);
}

/** Retry-After as seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
