import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedProduct, startEmbedded } from '@hallmark/app';
import { backendServices, routes } from '@hallmark/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let product: EmbeddedProduct;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hallmark-embedded-'));
  product = await startEmbedded({
    PORT: '0',
    HALLMARK_HOST: '127.0.0.1',
    HALLMARK_DATA_DIR: dataDir,
    HALLMARK_LOG_LEVEL: 'silent',
    HALLMARK_REQUEST_TIMEOUT_MS: '500',
    HALLMARK_BODY_LIMIT_BYTES: '2048',
    // The tests below ping without a key, many times a second: more than one address's 10 (Limits).
    HALLMARK_PUBLIC_RATE_LIMIT: '1000',
  });
});

afterAll(async () => {
  await product?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const post = (path: string, body: string | undefined, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${product.url}${path}`, { method: 'POST', headers, ...(body === undefined ? {} : { body }) });

async function expectEnvelope(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as {
    error: { code: string; message: string; details?: unknown };
    meta: { requestId: string; timestamp: string };
  };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.meta.requestId).toBe(response.headers.get('x-request-id'));
  expect(Number.isNaN(Date.parse(body.meta.timestamp))).toBe(false);
  return body;
}

describe('embedded form over HTTP', () => {
  it('answers liveness and readiness', async () => {
    const health = await fetch(`${product.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${product.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: { ok: true } } });
  });

  it.each(backendServices)('reaches %s over the bus and back, carrying the request id', async (service) => {
    const response = await post(`/api/v1/system/ping/${service}`, '{}', {
      'content-type': 'application/json',
      'x-request-id': `e2e-${service}`,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(`e2e-${service}`);
    expect(await response.json()).toMatchObject({ service, requestId: `e2e-${service}` });
  });

  it('takes a POST without a body as an empty object', async () => {
    const response = await post('/api/v1/system/ping/code-service', undefined, {});
    expect(response.status).toBe(200);
  });

  it('makes up a request id when the caller sends none or an unusable one', async () => {
    const response = await post('/api/v1/system/ping/code-service', '{}', {
      'content-type': 'application/json',
      'x-request-id': 'no spaces <allowed>',
    });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    await expectEnvelope(await post('/api/v1/system/ping/code-service', '{"delayMs": 1,'), 400, 'VALIDATION_ERROR');
  });

  it('answers an empty JSON body with 400 VALIDATION_ERROR', async () => {
    await expectEnvelope(await post('/api/v1/system/ping/code-service', ''), 400, 'VALIDATION_ERROR');
  });

  it('lists each bad field of an invalid body', async () => {
    const body = await expectEnvelope(
      await post('/api/v1/system/ping/code-service', '{"delayMs":"soon","extra":1}'),
      400,
      'VALIDATION_ERROR',
    );
    expect(body.error.details).toEqual({
      fields: expect.arrayContaining([
        expect.objectContaining({ field: 'delayMs', in: 'body' }),
        expect.objectContaining({ field: 'extra', message: 'is not an accepted field' }),
      ]),
    });
  });

  it('answers an unknown service name with 400 VALIDATION_ERROR naming the parameter', async () => {
    const body = await expectEnvelope(await post('/api/v1/system/ping/billing-service', '{}'), 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(body.error.details)).toContain('service');
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    await expectEnvelope(
      await post('/api/v1/system/ping/code-service', JSON.stringify({ pad: 'x'.repeat(4096) })),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('answers a body that is not JSON with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    await expectEnvelope(
      await post('/api/v1/system/ping/code-service', 'delayMs=1', { 'content-type': 'text/plain' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    await expectEnvelope(
      await post('/api/v1/system/ping/code-service', 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    // JSON declared in another charset was read as UTF-8 all the same: refused, not reinterpreted.
    for (const charset of ['utf-16', 'latin1', '"ISO-8859-1"']) {
      await expectEnvelope(
        await post('/api/v1/system/ping/code-service', '{}', { 'content-type': `application/json; charset=${charset}` }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
    }
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"']) {
      const answer = await post('/api/v1/system/ping/code-service', '{}', {
        'content-type': `application/json; charset=${charset}`,
      });
      expect(answer.status, charset).toBe(200);
    }
  });

  it('answers an unknown route with 404 NOT_FOUND', async () => {
    await expectEnvelope(await fetch(`${product.url}/api/v1/no/such/thing`), 404, 'NOT_FOUND');
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when a service does not answer in time', async () => {
    const slow = await post('/api/v1/system/ping/compliance-service', '{"delayMs":1500}');
    expect(slow.headers.get('retry-after')).toBe('1');
    await expectEnvelope(slow, 503, 'SERVICE_UNAVAILABLE');
  });

  it('serves an OpenAPI 3.1 document with every route of the contracts', async () => {
    const response = await fetch(`${product.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(document.openapi).toBe('3.1.0');
    for (const route of routes) {
      expect(document.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
    // Serialised once: gzip when asked, an ETag a client revalidates with, cacheable for 5 minutes.
    const etag = response.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const again = await fetch(`${product.url}/api/v1/openapi.json`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const gzipped = await new Promise<{ encoding: string | undefined; bytes: number }>((resolve, reject) => {
      const asked = httpRequest(`${product.url}/api/v1/openapi.json`, { headers: { 'accept-encoding': 'gzip' } }, (answer) => {
        let bytes = 0;
        answer.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        answer.on('end', () => resolve({ encoding: answer.headers['content-encoding'], bytes }));
      });
      asked.on('error', reject);
      asked.end();
    });
    expect(gzipped.encoding).toBe('gzip');
    expect(gzipped.bytes).toBeLessThan(JSON.stringify(document).length / 4);
  });
});
