import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { APIResponseTooLargeError, Hallmark } from '@hallmark/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// The TypeScript SDK against a hostile HTTP server on 127.0.0.1, found by a review of the client
// libraries (2026-12-04): maxResponseBytes bounds the answer as fetch gives it, inflated, so a gzip
// answer of a small Content-Length that inflates far past the bound is refused (APIResponseTooLargeError)
// rather than read whole, over a fetch given to the client and on an upload in Node's default client.

type Handler = (request: IncomingMessage, body: Buffer, response: ServerResponse, index: number) => void;

let server: Server;
let baseUrl: string;
let handler: Handler = (_request, _body, response) => response.end();
let count = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, Buffer.concat(chunks), response, count++));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  count = 0;
  handler = (_request, _body, response) => response.end();
});

/** What a call came to, in a few words (a 32 MiB answer is not printed in a failure). */
const outcome = (call: PromiseLike<unknown>) =>
  Promise.resolve(call).then(
    (data) => `resolved with ${JSON.stringify(data)?.length ?? 0} characters of data`,
    (error: Error) => error.constructor.name,
  );

/** A JSON answer of `size` bytes once inflated, sent gzip-compressed with its (small) compressed Content-Length. */
function gzipBomb(size: number): Buffer {
  const json = Buffer.alloc(size, 0x30); // '0'
  json.write('{"a":"', 0);
  json.write('"}', size - 2);
  return gzipSync(json, { level: 9 });
}

describe('maxResponseBytes against a compressed answer', () => {
  const inflated = 32 * 1024 * 1024;
  const limit = 1024 * 1024;

  const serveBomb: Handler = (_request, _body, response) => {
    const bomb = gzipBomb(inflated);
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'content-length': String(bomb.length),
    });
    response.end(bomb);
  };

  it('a gzip answer inflating past maxResponseBytes is refused over the fetch transport', async () => {
    handler = serveBomb;
    const hallmark = new Hallmark({
      baseUrl,
      apiKey: 'svc_test_x',
      maxRetries: 0,
      maxResponseBytes: limit,
      fetch: (i, o) => fetch(i, o),
    });
    expect(await outcome(hallmark.codes.verify({ url: 'https://id.example/01/09506000134352/21/A' }))).toBe(
      APIResponseTooLargeError.name,
    );
  });

  it('a gzip answer inflating past maxResponseBytes is refused on an upload in Node’s default client (it goes over fetch)', async () => {
    handler = serveBomb;
    const hallmark = new Hallmark({ baseUrl, apiKey: 'svc_test_x', maxRetries: 0, maxResponseBytes: limit });
    expect(await outcome(hallmark.account.branding.uploadLogo({ body: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) }))).toBe(
      APIResponseTooLargeError.name,
    );
  });
});
