import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthenticatedKey } from '@hallmark/accounts';
import { HallmarkError } from '@hallmark/contracts';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installLargeBodyLimits, largeBodyBytes } from './large-bodies.ts';

const MiB = 1024 * 1024;

/** A server with the limits, whose `x-account` header stands in for authentication. */
async function serverWith(limits: { atOnce: number; bytesPerSecond: number; burstBytes: number }, now: () => number) {
  const app = Fastify();
  app.decorateRequest('apiKey', null);
  app.addHook('onRequest', (request, _reply, done) => {
    const account = request.headers['x-account'];
    if (typeof account === 'string') request.apiKey = { accountId: account } as AuthenticatedKey;
    done();
  });
  installLargeBodyLimits(app, { ...limits, now });
  app.setErrorHandler((error, _request, reply) => {
    const code = error instanceof HallmarkError ? error.code : 'OTHER';
    reply.status(code === 'RATE_LIMITED' ? 429 : code === 'SERVICE_UNAVAILABLE' ? 503 : 500).send({ code });
  });
  app.post('/batch', { bodyLimit: limits.burstBytes }, async (request) => ({ bytes: JSON.stringify(request.body).length }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

interface Sent {
  /** Resolves with the answer's status and Retry-After once it comes. */
  answer: Promise<{ status: number; retryAfter: string | undefined }>;
  /** Sends the rest of the body. */
  finish(): void;
  /** Closes the connection without sending the rest. */
  abandon(): void;
}

/** A POST declaring `declared` bytes, of which only the first few are sent until `finish`. */
function send(app: FastifyInstance, account: string, declared: number | 'chunked'): Sent {
  const { port } = app.server.address() as AddressInfo;
  const body = Buffer.from(`{"a":"${'x'.repeat((declared === 'chunked' ? 100 : declared) - 8)}"}`);
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/batch',
    headers: {
      'content-type': 'application/json',
      'x-account': account,
      ...(declared === 'chunked' ? {} : { 'content-length': String(body.length) }),
    },
  });
  const answer = new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
    req.on('response', (response) => {
      response.resume();
      const retryAfter = response.headers['retry-after'];
      resolve({ status: response.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined });
    });
    req.on('error', reject);
  });
  answer.catch(() => {});
  req.write(body.subarray(0, 10));
  return {
    answer,
    finish: () => req.end(body.subarray(10)),
    abandon: () => req.destroy(),
  };
}

/** Whether `sent` has an answer within `ms` (a held body has none). */
const answeredWithin = (sent: Sent, ms: number) =>
  Promise.race([sent.answer.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

let app: FastifyInstance | undefined;
afterEach(async () => {
  app?.server.closeAllConnections();
  await app?.close();
  app = undefined;
});

describe('large bodies', () => {
  it('holds at most a quarter of the places for one account (429) and all of them for the gateway (503), and frees a place when its connection closes', async () => {
    app = await serverWith({ atOnce: 8, bytesPerSecond: 1024 * MiB, burstBytes: 4 * MiB }, () => performance.now());
    const held = ['a', 'a'].map((account) => send(app as FastifyInstance, account, 2 * MiB));
    for (const sent of held) expect(await answeredWithin(sent, 100)).toBe(false);
    const third = send(app, 'a', 2 * MiB);
    expect(await third.answer).toEqual({ status: 429, retryAfter: '1' });
    held.push(...['b', 'b', 'c', 'c', 'd', 'd'].map((account) => send(app as FastifyInstance, account, 2 * MiB)));
    for (const sent of held) expect(await answeredWithin(sent, 50)).toBe(false);
    const ninth = send(app, 'e', 2 * MiB);
    expect(await ninth.answer).toEqual({ status: 503, retryAfter: '1' });
    // Small bodies are not counted, whoever sends them.
    const small = send(app, 'a', largeBodyBytes - 1);
    small.finish();
    expect((await small.answer).status).toBe(200);

    held[0]?.abandon();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = send(app, 'a', 2 * MiB);
    again.finish();
    expect((await again.answer).status).toBe(200);
    for (const sent of held.slice(1)) sent.finish();
    expect((await Promise.all(held.slice(1).map((sent) => sent.answer))).map((answer) => answer.status)).toEqual(
      Array(7).fill(200),
    );
  });

  it('spends an account’s budget by the bytes declared, refills it with time, and counts a chunked body as the route’s largest', async () => {
    let nowMs = 0;
    app = await serverWith({ atOnce: 8, bytesPerSecond: MiB, burstBytes: 4 * MiB }, () => nowMs);
    const first = send(app, 'a', 3 * MiB);
    first.finish();
    expect((await first.answer).status).toBe(200);
    // 1 MiB left: 2 MiB more are refused, with the seconds until the budget covers them.
    expect(await send(app, 'a', 2 * MiB).answer).toEqual({ status: 429, retryAfter: '1' });
    expect(await send(app, 'a', 4 * MiB - 10).answer).toMatchObject({ status: 429, retryAfter: '3' });
    // Another account has its own.
    const other = send(app, 'b', 3 * MiB);
    other.finish();
    expect((await other.answer).status).toBe(200);
    nowMs += 1_000;
    const later = send(app, 'a', 2 * MiB);
    later.finish();
    expect((await later.answer).status).toBe(200);
    // No Content-Length: counted as the route's limit (4 MiB), more than is left.
    expect((await send(app, 'b', 'chunked').answer).status).toBe(429);
    nowMs += 10_000;
    const chunked = send(app, 'b', 'chunked');
    chunked.finish();
    expect((await chunked.answer).status).toBe(200);
  });
});
