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

  /** An app whose every request is `key`'s, with the Idempotency-Key handling and `deps` besides. */
  const appWith = (deps: Partial<Parameters<typeof installIdempotency>[1]> = {}) => {
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
      ...deps,
    });
    return app;
  };

  /** Listens, and sends POST /slow with this Idempotency-Key and body each time it is called. */
  const listenForSlow = async (app: ReturnType<typeof Fastify>, idempotencyKey: string, body: unknown) => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    return () =>
      fetch(`http://127.0.0.1:${port}/slow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(body),
      });
  };

  it('renews the lease while the first attempt runs: a retry after the lease is 409, then the answer is replayed', async () => {
    const app = appWith();
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
      const send = await listenForSlow(app, 'slow-batch-1', { items: 3 });
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

  it('asks whether a lapsed attempt that noted nothing spent: 503 and the claim left as it was while the counters cannot say, then all prepaid once they say it did', async () => {
    const asked: string[] = [];
    let countersUp = false;
    const app = appWith({
      closeAttemptSpend: async (owner, claim) => {
        asked.push(`${owner.accountId}:${owner.environment}:${claim}`);
        if (!countersUp) throw new Error('counters unreachable');
        return true;
      },
    });
    const claims: string[] = [];
    let runs = 0;
    app.post('/slow', { config: { route: slowRoute } }, async (request, reply) => {
      runs += 1;
      const attempt = request.idempotentAttempt;
      claims.push(attempt?.token ?? '');
      if (runs === 1) {
        // As if its gateway died after the spend, before the note: no renewals, no note, no answer in time.
        clearInterval(attempt?.renewal);
        await new Promise((resolve) => setTimeout(resolve, leaseMs * 6));
      }
      reply.status(201);
      return { run: runs, prepaid: attempt?.prepaid };
    });
    const rowOf = async () =>
      (
        await test.db.query<{ claim: string | null; prepaid: unknown; prepaid_by: string | null }>(
          `SELECT claim, prepaid, prepaid_by FROM idempotent_requests WHERE account_id = $1 AND operation = 'slowCreate' AND status IS NULL`,
          [key.accountId],
        )
      )[0];
    try {
      const send = await listenForSlow(app, 'killed-before-note', { items: 1 });
      const first = send();
      await new Promise((resolve) => setTimeout(resolve, leaseMs * 2));
      const [dead] = claims;
      expect(await rowOf()).toMatchObject({ claim: dead, prepaid: null, prepaid_by: null });

      const unsure = await send();
      expect(unsure.status).toBe(503);
      expect(await unsure.text()).toContain('SERVICE_UNAVAILABLE');
      expect(asked).toEqual([`${key.accountId}:live:${dead}`]);
      // The claim is the dead attempt's again, still lapsed: the next retry asks again.
      expect(await rowOf()).toMatchObject({ claim: dead, prepaid: null });
      expect(runs).toBe(1);

      countersUp = true;
      const retry = await send();
      expect(retry.status).toBe(201);
      expect(await retry.json()).toEqual({ run: 2, prepaid: { '0': 1 } });
      expect(asked).toEqual([`${key.accountId}:live:${dead}`, `${key.accountId}:live:${dead}`]);
      // The first attempt, answering late, stores nothing: the retry's answer is the key's.
      expect((await first).status).toBe(201);
      const replayed = await send();
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(await replayed.json()).toEqual({ run: 2, prepaid: { '0': 1 } });
    } finally {
      await app.close();
    }
  });
});
