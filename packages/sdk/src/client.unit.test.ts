import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIResponseTooLargeError,
  APITimeoutError,
  APIUserAbortError,
  ConflictError,
  DuplicateSerialError,
  Hallmark,
  InvalidResponseError,
  NotFoundError,
  RateLimitedError,
  ServiceUnavailableError,
} from './index.ts';

// The runtime's behaviours against a real HTTP server on 127.0.0.1 that answers as each test scripts
// it (the product itself is in test/e2e/sdk.test.ts). A fetch stub only where no server can help:
// a fetch that hands back a body stream it reads once.

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

type Handler = (request: Received, response: ServerResponse, index: number) => void;

let server: Server;
let baseUrl: string;
let handler: Handler = (_request, response) => response.end();
let received: Received[] = [];

const envelope = (code: string, message = code) =>
  JSON.stringify({ error: { code, message }, meta: { requestId: 'r', timestamp: '2026-11-25T08:00:00.000Z' } });

function answer(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${received.length}`, ...headers });
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
      };
      received.push(entry);
      handler(entry, response, received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  received = [];
  handler = (_request, response) => response.end();
});

// Every behaviour over both transports: node:http (Node's default) and fetch (browsers, or a fetch given).
const transports: Array<[string, Partial<ConstructorParameters<typeof Hallmark>[0]>]> = [
  ['node:http (the default in Node)', {}],
  ['fetch', { fetch: (input, init) => fetch(input, init) }],
];

describe.each(transports)('over %s', (_name, transportOptions) => {
  const client = (options: Partial<ConstructorParameters<typeof Hallmark>[0]> = {}) =>
    new Hallmark({ baseUrl, apiKey: 'svc_test_key', maxRetries: 2, ...transportOptions, ...options });

  const generated = { url: 'https://id.example/01/09506000134352/21/A', gtin: '09506000134352', serial: 'A' };

  describe('retries', () => {
    it('a POST answered 503 twice is retried with the same Idempotency-Key and the same body, then succeeds', async () => {
      handler = (_request, response, index) =>
        index < 2 ? answer(response, 503, envelope('SERVICE_UNAVAILABLE')) : answer(response, 201, generated);
      const started = performance.now();
      const code = await client().codes.generate({ gtin: '09506000134352', serialNumber: 'A' });
      expect(code).toEqual(generated);
      expect(received).toHaveLength(3);
      const keys = new Set(received.map((request) => request.headers['idempotency-key']));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^hallmark-sdk-[0-9a-f-]{36}$/);
      for (const request of received) {
        expect(JSON.parse(request.body.toString())).toEqual({ gtin: '09506000134352', serialNumber: 'A' });
        expect(request.headers['x-api-key']).toBe('svc_test_key');
      }
      // Two backoffs: ~0.5 s and ~1 s less up to a quarter each.
      expect(performance.now() - started).toBeGreaterThan(0.75 * 500 + 0.75 * 1000 - 50);
    });

    it('each call has its own Idempotency-Key; a given one is used as is', async () => {
      handler = (_request, response) => answer(response, 201, generated);
      const hallmark = client();
      await hallmark.codes.generate({ gtin: '09506000134352', serialNumber: 'A' });
      await hallmark.codes.generate({ gtin: '09506000134352', serialNumber: 'A' });
      await hallmark.codes.generate({ gtin: '09506000134352', serialNumber: 'A' }, { idempotencyKey: 'mine-1' });
      const keys = received.map((request) => request.headers['idempotency-key']);
      expect(new Set(keys).size).toBe(3);
      expect(keys[2]).toBe('mine-1');
    });

    it('operations that take no Idempotency-Key are sent without one', async () => {
      handler = (_request, response) => answer(response, 200, { verdict: 'AUTHENTIC' });
      await client().codes.verify({ url: generated.url });
      expect(received[0]?.headers['idempotency-key']).toBeUndefined();
    });

    it('gives up after maxRetries and throws the last answer’s error', async () => {
      handler = (_request, response) => answer(response, 503, envelope('SERVICE_UNAVAILABLE'));
      const error = await client({ maxRetries: 1 })
        .keys.list()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', requestId: 'req-2' });
      expect(received).toHaveLength(2);
    });

    it('waits what Retry-After asks on a 429', async () => {
      handler = (_request, response, index) =>
        index === 0
          ? answer(response, 429, envelope('RATE_LIMITED'), { 'retry-after': '1' })
          : answer(response, 200, { keys: [], pagination: { limit: 20, nextCursor: null, hasMore: false } });
      const started = performance.now();
      await client().keys.list();
      expect(performance.now() - started).toBeGreaterThanOrEqual(990);
      expect(received).toHaveLength(2);
    });

    it('throws a 429 whose Retry-After is over a minute (a spent daily quota) at once', async () => {
      handler = (_request, response) => answer(response, 429, envelope('RATE_LIMITED'), { 'retry-after': '7200' });
      const error = await client()
        .codes.verify({ url: generated.url })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RateLimitedError);
      expect((error as RateLimitedError).retryAfterSeconds).toBe(7200);
      expect(received).toHaveLength(1);
    });

    it('retries a 409 only while the same Idempotency-Key still runs (with Retry-After), not a conflict', async () => {
      handler = (_request, response, index) =>
        index === 0 ? answer(response, 409, envelope('CONFLICT'), { 'retry-after': '0' }) : answer(response, 201, generated);
      await client().codes.generate({ gtin: '09506000134352', serialNumber: 'A' });
      expect(received).toHaveLength(2);

      received = [];
      handler = (_request, response) => answer(response, 409, envelope('DUPLICATE_SERIAL'));
      const duplicate = await client()
        .codes.generate({ gtin: '09506000134352', serialNumber: 'A' })
        .catch((caught: unknown) => caught);
      expect(duplicate).toBeInstanceOf(DuplicateSerialError);
      expect(received).toHaveLength(1);

      received = [];
      handler = (_request, response) => answer(response, 409, envelope('CONFLICT'));
      expect(
        await client()
          .keys.create({ name: 'k', publicKey: 'x', algorithm: 'Ed25519', proof: 'p' })
          .catch((caught) => caught),
      ).toBeInstanceOf(ConflictError);
      expect(received).toHaveLength(1);
    });

    it('does not retry other 4xx', async () => {
      handler = (_request, response) => answer(response, 404, envelope('NOT_FOUND'));
      await expect(client().schemas.get({ id: 'nope' })).rejects.toBeInstanceOf(NotFoundError);
      expect(received).toHaveLength(1);
    });

    it('retries a connection closed before any answer, then throws APIConnectionError', async () => {
      // A port that takes each connection and closes it at once, counting them.
      let connections = 0;
      const closing = createNetServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
      const port = (closing.address() as AddressInfo).port;
      try {
        const error = await client({ baseUrl: `http://127.0.0.1:${port}` })
          .system.health()
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(APIConnectionError);
        expect(error).not.toBeInstanceOf(APITimeoutError);
        expect(connections).toBe(3);
      } finally {
        await new Promise((resolve) => closing.close(resolve));
      }
    });

    it('a header value HTTP cannot carry fails the call, and nothing fires later', async () => {
      const error = await client({ apiKey: 'svc_test_a\r\nx-injected: 1', timeout: 100, maxRetries: 0 })
        .system.health()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIConnectionError);
      // A timer left behind would fire here (vitest fails the run on an uncaught error).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received).toHaveLength(0);
    });

    it('a refused connection is an APIConnectionError', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const error = await client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 })
        .system.health()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIConnectionError);
      expect(String((error as Error).message)).toMatch(/ECONNREFUSED|fetch failed|connect/);
    });

    it('a connection reset mid-answer is retried', async () => {
      handler = (request, response, index) => {
        if (index === 0) {
          request.headers.connection = 'close';
          response.socket?.destroy();
          return;
        }
        answer(response, 200, { status: 'ok' });
      };
      expect(await client().system.health()).toEqual({ status: 'ok' });
      expect(received).toHaveLength(2);
    });
  });

  describe('requests not safe to repeat (a POST without an Idempotency-Key the operation honours)', () => {
    const since = '2026-11-25T08:00:00.000Z';

    it('a 5xx is thrown at once, even a 503 with Retry-After: the API may have done the work', async () => {
      handler = (_request, response) => answer(response, 500, envelope('INTERNAL_ERROR'));
      await expect(client().webhooks.endpoints.test({ id: 'ep_1' })).rejects.toMatchObject({ status: 500 });
      expect(received).toHaveLength(1);

      received = [];
      handler = (_request, response) => answer(response, 503, envelope('SERVICE_UNAVAILABLE'), { 'retry-after': '0' });
      await expect(client().webhooks.endpoints.replayFailed({ id: 'ep_1', since })).rejects.toBeInstanceOf(
        ServiceUnavailableError,
      );
      expect(received).toHaveLength(1);
    });

    it('a connection cut after the request was sent is not sent again', async () => {
      handler = (_request, response) => void response.socket?.destroy();
      await expect(client().webhooks.endpoints.test({ id: 'ep_1' })).rejects.toBeInstanceOf(APIConnectionError);
      expect(received).toHaveLength(1);
    });

    it('a 429 is retried: the rate limits refuse before anything is done', async () => {
      handler = (_request, response, index) =>
        index === 0
          ? answer(response, 429, envelope('RATE_LIMITED'), { 'retry-after': '0' })
          : answer(response, 202, { replayed: 3 });
      expect(await client().webhooks.endpoints.replayFailed({ id: 'ep_1', since })).toEqual({ replayed: 3 });
      expect(received).toHaveLength(2);
    });

    it('a connection that was never made is retried: the request never left', async () => {
      // A port nobody listens on for the first attempt; the server opens it before the retry.
      const later = createServer((_request, response) => answer(response, 202, { messageId: 'msg_1' }));
      await new Promise<void>((resolve) => later.listen(0, '127.0.0.1', resolve));
      const port = (later.address() as AddressInfo).port;
      await new Promise((resolve) => later.close(resolve));
      let requests = 0;
      later.on('request', () => requests++);
      const call = client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1 }).webhooks.endpoints.test({ id: 'ep_1' });
      // The first attempt is refused at once; the retry comes after a backoff of at least 375 ms.
      await new Promise((resolve) => setTimeout(resolve, 150));
      await new Promise<void>((resolve) => later.listen(port, '127.0.0.1', resolve));
      try {
        expect(await call).toEqual({ messageId: 'msg_1' });
        expect(requests).toBe(1);
      } finally {
        later.closeAllConnections();
        await new Promise((resolve) => later.close(resolve));
      }
    });

    it('a caller’s Idempotency-Key is sent, but does not make a retry safe where the operation ignores it', async () => {
      handler = (_request, response) => answer(response, 503, envelope('SERVICE_UNAVAILABLE'));
      await expect(
        client().webhooks.endpoints.replayFailed({ id: 'ep_1', since }, { idempotencyKey: 'mine-2' }),
      ).rejects.toBeInstanceOf(ServiceUnavailableError);
      expect(received.map((request) => request.headers['idempotency-key'])).toEqual(['mine-2']);
    });

    it('POST /code/verify is retried all the same (a repeat records one more scan), as docs/SDK.md says', async () => {
      handler = (_request, response, index) => {
        if (index === 0) return void response.socket?.destroy();
        if (index === 1) return answer(response, 503, envelope('SERVICE_UNAVAILABLE'));
        answer(response, 200, { verdict: 'AUTHENTIC' });
      };
      expect(await client().codes.verify({ url: generated.url })).toEqual({ verdict: 'AUTHENTIC' });
      expect(received).toHaveLength(3);
    });
  });

  describe('bodies on retry', () => {
    it('a photo upload sends the same multipart fields and file bytes on every attempt', async () => {
      const photo = new Uint8Array(64 * 1024).map((_, index) => (index * 31) % 251);
      handler = (_request, response, index) =>
        index < 2 ? answer(response, 503, envelope('SERVICE_UNAVAILABLE')) : answer(response, 201, { objectId: 'o' });
      await client().auction.objects.uploadPhoto({ objectId: 'obj-1', angle: 'front', photo });
      expect(received).toHaveLength(3);
      const digest = createHash('sha256').update(photo).digest('hex');
      for (const request of received) {
        expect(request.url).toBe('/api/v1/auction/objects/obj-1/photos');
        const form = await new Response(request.body, {
          headers: { 'content-type': String(request.headers['content-type']) },
        }).formData();
        expect(form.get('angle')).toBe('front');
        const file = form.get('photo') as File;
        expect(
          createHash('sha256')
            .update(Buffer.from(await file.arrayBuffer()))
            .digest('hex'),
        ).toBe(digest);
      }
      expect(new Set(received.map((request) => request.headers['idempotency-key'])).size).toBe(1);
    });

    it('a Blob file is sent whole on every attempt too (a fetch that consumes what it is given)', async () => {
      // A fetch stub: it reads the body it is handed, as a real one does, so a body object reused
      // across attempts would arrive empty the second time.
      const seen: string[] = [];
      let calls = 0;
      const consuming: typeof fetch = async (_input, init) => {
        const request = new Request('http://stub.invalid/', { method: 'POST', body: init?.body ?? null, headers: init?.headers });
        const form = await request.formData();
        seen.push(await (form.get('photo') as File).text());
        calls++;
        return calls < 3
          ? new Response(envelope('SERVICE_UNAVAILABLE'), { status: 503 })
          : new Response(JSON.stringify({ objectId: 'o' }), { status: 201 });
      };
      await new Hallmark({ baseUrl, fetch: consuming }).auction.objects.uploadPhoto({
        objectId: 'o',
        angle: 'front',
        photo: new Blob(['the same bytes'], { type: 'image/png' }),
      });
      expect(seen).toEqual(['the same bytes', 'the same bytes', 'the same bytes']);
    });

    it('CSV text and JSON fields are sent again unchanged', async () => {
      // A 429: createFromCsv takes no Idempotency-Key, so only a refusal before any work is retried.
      handler = (_request, response, index) =>
        index === 0
          ? answer(response, 429, envelope('RATE_LIMITED'), { 'retry-after': '0' })
          : answer(response, 200, { results: [] });
      await client().blocklist.createFromCsv({ body: 'gtin,serial\n09506000134352,A\n' });
      expect(received.map((request) => request.body.toString())).toEqual([
        'gtin,serial\n09506000134352,A\n',
        'gtin,serial\n09506000134352,A\n',
      ]);
      expect(received[0]?.headers['content-type']).toBe('text/csv');
    });
  });

  describe('requests', () => {
    it('puts path parameters in the path (encoded, no dot segments) and query parameters in the query', async () => {
      handler = (_request, response) => answer(response, 200, {});
      await client().schemas.get({ id: 's?1#', version: 3 });
      await client().webhooks.messages.attempts({ id: 'a b', messageId: 'm/1' });
      expect(received.map((request) => request.url)).toEqual([
        '/api/v1/schemas/s%3F1%23?version=3',
        '/api/v1/webhooks/endpoints/a%20b/messages/m/1/attempts',
      ]);
      for (const id of ['..', '../keys', 'a/./b']) await expect(client().schemas.get({ id })).rejects.toThrow(/may not hold/);
      expect(received).toHaveLength(2);
    });

    it('keeps a base URL’s own path', async () => {
      handler = (_request, response) => answer(response, 200, { status: 'ok' });
      await client({ baseUrl: `${baseUrl}/behind/a/proxy/` }).system.health();
      expect(received[0]?.url).toBe('/behind/a/proxy/health');
    });
  });

  describe('timeouts and abort', () => {
    it('an attempt past the timeout is an APITimeoutError, after its retries', async () => {
      handler = () => {
        // Never answers.
      };
      const started = performance.now();
      const error = await client({ timeout: 200, maxRetries: 1 })
        .system.health()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APITimeoutError);
      expect(received).toHaveLength(2);
      expect(performance.now() - started).toBeLessThan(3000);
    });

    it('a slow body counts against the timeout too', async () => {
      handler = (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"status":');
      };
      await expect(client({ timeout: 300, maxRetries: 0 }).system.health()).rejects.toBeInstanceOf(APITimeoutError);
    });

    it('a timed-out attempt is cancelled: its connection is closed, not left waiting', async () => {
      let closedAt: number | undefined;
      handler = (request, response) => {
        // Never answers; notes when the client gives the connection up.
        response.socket?.once('close', () => {
          closedAt = performance.now();
        });
        void request;
      };
      const started = performance.now();
      await expect(client({ timeout: 200, maxRetries: 0 }).system.health()).rejects.toBeInstanceOf(APITimeoutError);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(closedAt).toBeDefined();
      expect((closedAt ?? 0) - started).toBeLessThan(1_000);
    });

    it('the caller’s AbortSignal stops the call and every retry to come', async () => {
      handler = (_request, response) => answer(response, 503, envelope('SERVICE_UNAVAILABLE'));
      const controller = new AbortController();
      const call = client({ maxRetries: 5 }).system.health(undefined, { signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      await expect(call).rejects.toBeInstanceOf(APIUserAbortError);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(received).toHaveLength(1);
    });
  });

  describe('answer size (maxResponseBytes)', () => {
    const big = (bytes: number) => JSON.stringify({ status: 'ok', padding: 'x'.repeat(bytes) });

    it('refuses an answer whose Content-Length is past the bound, without retrying it', async () => {
      handler = (_request, response) => answer(response, 200, big(2 * 1024 * 1024));
      const error = await client({ maxResponseBytes: 1024 * 1024 })
        .system.health()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIResponseTooLargeError);
      expect((error as Error).message).toContain('1048576 bytes');
      expect(received).toHaveLength(1);
    });

    it('stops reading an answer of no declared length once it passes the bound, the stream cut', async () => {
      // A server streaming without end (bounded here at 64 MiB): the client stops at its bound.
      let written = 0;
      let cut: () => void = () => {};
      const cutSeen = new Promise<void>((resolve) => {
        cut = resolve;
      });
      handler = (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const write = () => {
          while (written < 64 * 1024 * 1024 && !response.destroyed) {
            written += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', write);
          }
          response.end();
        };
        response.on('close', () => cut());
        write();
      };
      const error = await client({ maxResponseBytes: 1024 * 1024 })
        .system.health()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIResponseTooLargeError);
      await cutSeen;
      expect(written).toBeLessThan(16 * 1024 * 1024);
      expect(received).toHaveLength(1);
    });

    it('reads a larger answer when the call allows it, and any answer within the default 256 MiB', async () => {
      handler = (_request, response) => answer(response, 200, big(2 * 1024 * 1024));
      const limited = client({ maxResponseBytes: 1024 * 1024 });
      const allowed = await limited.system.health(undefined, { maxResponseBytes: 4 * 1024 * 1024 });
      expect((allowed as { status: string }).status).toBe('ok');
      expect(((await client().system.health()) as { status: string }).status).toBe('ok');
    });
  });

  describe('answers', () => {
    it('withResponse gives the response and the request id beside the data', async () => {
      handler = (_request, response) => answer(response, 200, { status: 'ok' }, { 'x-ratelimit-remaining': '9' });
      const { data, response, requestId } = await client().system.health().withResponse();
      expect(data).toEqual({ status: 'ok' });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-remaining')).toBe('9');
      expect(requestId).toBe('req-1');
    });

    it('withResponse of a 204 and of a 404 error: a Response, and the error’s headers', async () => {
      handler = (request, response) =>
        request.method === 'DELETE'
          ? void response.writeHead(204, { 'x-request-id': 'req-204' }).end()
          : answer(response, 404, envelope('NOT_FOUND'), { 'x-request-id': 'req-404' });
      const deleted = await client().links.delete({ id: 'l' }).withResponse();
      expect(deleted.response.status).toBe(204);
      expect(deleted.requestId).toBe('req-204');
      expect(await deleted.response.text()).toBe('');
      const error = (await client()
        .schemas.get({ id: 'nope' })
        .catch((caught: unknown) => caught)) as NotFoundError;
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error.headers.get('X-Request-Id')).toBe('req-404');
      expect(error.requestId).toBe('req-404');
    });

    it('a header given per call replaces the SDK’s whatever its case', async () => {
      handler = (_request, response) => answer(response, 200, { status: 'ok' });
      await client({ defaultHeaders: { 'X-Client': 'default' } }).system.health(undefined, {
        headers: { Accept: 'application/json; q=1', 'X-Client': 'per-call' },
      });
      expect(received[0]?.headers.accept).toBe('application/json; q=1');
      expect(received[0]?.headers['x-client']).toBe('per-call');
      expect(received[0]?.headers['x-api-key']).toBe('svc_test_key');
    });

    it('204 is undefined, SVG is text, PNG is bytes', async () => {
      handler = (request, response) => {
        if (request.method === 'DELETE') return void response.writeHead(204).end();
        if (request.url.startsWith('/api/v1/code/qr'))
          return void response.writeHead(200, { 'content-type': 'image/svg+xml' }).end('<svg/>');
        response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([137, 80, 78, 71]));
      };
      expect(await client().links.delete({ id: 'l' })).toBeUndefined();
      expect(await client().codes.qr({ url: generated.url })).toBe('<svg/>');
      expect(await client().resolver.logo({ file: 'a.png' })).toEqual(new Uint8Array([137, 80, 78, 71]));
    });

    it('a 200 that is not JSON where JSON is due (a proxy’s page) is an InvalidResponseError, not the data', async () => {
      handler = (_request, response) =>
        void response.writeHead(200, { 'content-type': 'text/html', 'x-request-id': 'req-html' }).end('<html>Sign in</html>');
      const error = await client()
        .codes.generate({ gtin: '09506000134352', serialNumber: 'A' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(error).toMatchObject({ code: 'INVALID_RESPONSE', status: 200, requestId: 'req-html' });
      expect(received).toHaveLength(1);

      handler = (_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).end('{"verdict":');
      await expect(client().codes.verify({ url: generated.url })).rejects.toBeInstanceOf(InvalidResponseError);
    });

    it('a list asked for as CSV answers its text', async () => {
      handler = (_request, response) =>
        void response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end('scanId,gtin\ns1,09506000134352\n');
      expect(await client().scans.list({ format: 'csv' })).toBe('scanId,gtin\ns1,09506000134352\n');
    });

    it('a next cursor that is the cursor just sent throws InvalidResponseError instead of asking for ever', async () => {
      // Answers the same cursor again; after 10 requests it ends the list, so a loop that does not stop ends too.
      handler = (request, response, index) => {
        const cursor = new URL(request.url, 'http://x').searchParams.get('cursor');
        const next = index >= 10 ? null : cursor === null ? 'c1' : cursor;
        answer(response, 200, {
          keys: [{ id: `k${index}` }],
          pagination: { limit: 1, nextCursor: next, hasMore: next !== null },
        });
      };
      const ids: string[] = [];
      const error = await (async () => {
        for await (const key of client().keys.list({ limit: 1 })) ids.push(key.id);
      })().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(error).toMatchObject({ code: 'INVALID_RESPONSE', status: 200, requestId: 'req-2' });
      expect(ids).toEqual(['k0', 'k1']);
      expect(received).toHaveLength(2);

      // The cursor the first page was asked for counts too.
      received = [];
      await expect(
        (async () => {
          for await (const page of client().keys.list({ limit: 1, cursor: 'c1' }).pages()) void page;
        })(),
      ).rejects.toBeInstanceOf(InvalidResponseError);
      expect(received).toHaveLength(1);

      // A cycle A → B → A: every cursor new to the page before it, none new to the list.
      received = [];
      handler = (request, response, index) => {
        const cursor = new URL(request.url, 'http://x').searchParams.get('cursor');
        const next = index >= 10 ? null : cursor === 'A' ? 'B' : 'A';
        answer(response, 200, {
          keys: [{ id: `k${index}` }],
          pagination: { limit: 1, nextCursor: next, hasMore: next !== null },
        });
      };
      await expect(
        (async () => {
          for await (const key of client().keys.list({ limit: 1 })) void key;
        })(),
      ).rejects.toBeInstanceOf(InvalidResponseError);
      expect(received.map((request) => new URL(request.url, 'http://x').searchParams.get('cursor'))).toEqual([null, 'A', 'B']);
    });

    it('an empty page with a new cursor leads on (the server may skip rows)', async () => {
      handler = (request, response) => {
        const cursor = new URL(request.url, 'http://x').searchParams.get('cursor');
        if (cursor === null)
          return answer(response, 200, { keys: [], pagination: { limit: 1, nextCursor: 'c1', hasMore: true } });
        answer(response, 200, { keys: [{ id: 'k1' }], pagination: { limit: 1, nextCursor: null, hasMore: false } });
      };
      const ids: string[] = [];
      for await (const key of client().keys.list({ limit: 1 })) ids.push(key.id);
      expect(ids).toEqual(['k1']);
    });

    it('for await walks every page by nextCursor; awaiting gives the first page', async () => {
      const all = Array.from({ length: 25 }, (_, index) => ({ id: `k${index}` }));
      handler = (request, response) => {
        const url = new URL(request.url, 'http://x');
        const start = Number(url.searchParams.get('cursor') ?? 0);
        const limit = Number(url.searchParams.get('limit'));
        const end = Math.min(start + limit, all.length);
        answer(response, 200, {
          keys: all.slice(start, end),
          pagination: { limit, nextCursor: end < all.length ? String(end) : null, hasMore: end < all.length },
        });
      };
      const hallmark = client();
      const first = await hallmark.keys.list({ limit: 10 });
      expect(first.keys).toHaveLength(10);
      received = [];
      const ids: string[] = [];
      for await (const key of hallmark.keys.list({ limit: 10, type: 'api' })) ids.push(key.id);
      expect(ids).toEqual(all.map((key) => key.id));
      expect(received.map((request) => request.url)).toEqual([
        '/api/v1/keys?limit=10&type=api',
        '/api/v1/keys?limit=10&cursor=10&type=api',
        '/api/v1/keys?limit=10&cursor=20&type=api',
      ]);
    });
  });
});

describe('the transport in Node', () => {
  it('is node:http by default: no fetch headers, and one keep-alive connection for calls one after another', async () => {
    let connections = 0;
    const onConnection = () => connections++;
    server.on('connection', onConnection);
    try {
      handler = (_request, response) => answer(response, 200, { status: 'ok' });
      const hallmark = new Hallmark({ baseUrl });
      for (let call = 0; call < 5; call++) await hallmark.system.health();
      expect(received).toHaveLength(5);
      // undici's fetch sends sec-fetch-mode on every request; node:http does not.
      expect(received.every((request) => request.headers['sec-fetch-mode'] === undefined)).toBe(true);
      expect(connections).toBe(1);
    } finally {
      server.off('connection', onConnection);
    }
  });

  it('answers a redirect where the operation answers none as an error (HTTP_302), not as data', async () => {
    handler = (_request, response) => void response.writeHead(302, { location: '/elsewhere' }).end();
    await expect(
      new Hallmark({ baseUrl, maxRetries: 0 }).codes.generate({ gtin: '09506000134352', serialNumber: 'A' }),
    ).rejects.toMatchObject({ code: 'HTTP_302', status: 302 });
  });

  it('over fetch, does not follow a redirect to another host: the API key never reaches it, and the call raises HTTP_307', async () => {
    const elsewhere: IncomingMessage[] = [];
    const collector = createServer((request, response) => {
      elsewhere.push(request);
      response.end('{}');
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const target = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/collect`;
      handler = (_request, response) => void response.writeHead(307, { location: target }).end();
      const overFetch = new Hallmark({
        baseUrl,
        apiKey: 'hm_test_secret_key',
        maxRetries: 0,
        fetch: (input, init) => fetch(input, init),
      });
      await expect(overFetch.codes.generate({ gtin: '09506000134352', serialNumber: 'A' })).rejects.toMatchObject({
        code: 'HTTP_307',
        status: 307,
      });
      await expect(overFetch.system.health()).rejects.toMatchObject({ status: 307 });
      expect(elsewhere).toHaveLength(0);
    } finally {
      await new Promise((resolve) => collector.close(resolve));
    }
  });

  it('is the given fetch when one is given', async () => {
    handler = (_request, response) => answer(response, 200, { status: 'ok' });
    let calls = 0;
    await new Hallmark({
      baseUrl,
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    }).system.health();
    expect(calls).toBe(1);
    expect(received[0]?.headers['sec-fetch-mode']).toBe('cors');
  });
});
