import type { AddressInfo } from 'node:net';
import type { AuthenticatedKey } from '@hallmark/accounts';
import { migrateAccounts } from '@hallmark/accounts';
import type { RouteDefinition } from '@hallmark/contracts';
import { createLogger } from '@hallmark/runtime';
import { connectTestDatabase } from '@hallmark/sql';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installIdempotency } from './idempotency.ts';

// A request slower than its Idempotency-Key's lease (a batch of many chunks, each allowed the
// request timeout) must keep its key: a retry while it runs is 409, never a second run.

const leaseMs = 300;
const key: AuthenticatedKey = Object.freeze({
  keyId: 'key_slow',
  accountId: 'acc_slow',
  environment: 'live',
  scopes: Object.freeze(['*']),
  isOperator: false,
  tier: 'enterprise',
  expiresAt: null,
}) as AuthenticatedKey;
const slowRoute = { operationId: 'slowCreate', method: 'POST', path: '/slow', idempotent: true } as unknown as RouteDefinition;

describe('Idempotency-Key leases (PostgreSQL, over HTTP)', () => {
  let test: Awaited<ReturnType<typeof connectTestDatabase>>;
  beforeAll(async () => {
    test = await connectTestDatabase('idempotency_lease');
    await migrateAccounts(test.db);
  });
  afterAll(() => test?.drop());

  it('renews the lease while the first attempt runs: a retry after the lease is 409, then the answer is replayed', async () => {
    const app = Fastify();
    app.decorateRequest('apiKey', null);
    app.addHook('onRequest', async (request) => {
      request.apiKey = key;
    });
    installIdempotency(app, {
      db: test.db,
      clock: () => new Date(),
      leaseMs,
      log: createLogger({ instance: 'test', level: 'silent' }),
    });
    let runs = 0;
    app.post('/slow', { config: { route: slowRoute } }, async (_request, reply) => {
      runs += 1;
      const run = runs;
      // Four leases long.
      await new Promise((resolve) => setTimeout(resolve, leaseMs * 4));
      reply.status(201);
      return { run };
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const send = () =>
        fetch(`http://127.0.0.1:${port}/slow`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': 'slow-batch-1' },
          body: JSON.stringify({ items: 3 }),
        });
      const first = send();
      await new Promise((resolve) => setTimeout(resolve, leaseMs * 2));
      const retry = await send();
      expect(retry.status).toBe(409);
      expect(retry.headers.get('retry-after')).toBe('1');
      const answered = await first;
      expect(answered.status).toBe(201);
      expect(await answered.json()).toEqual({ run: 1 });
      const replayed = await send();
      expect(replayed.status).toBe(201);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(await replayed.json()).toEqual({ run: 1 });
      expect(runs).toBe(1);
    } finally {
      await app.close();
    }
  });
});
