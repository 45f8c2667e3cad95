import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureOperator, migrateAccounts } from '@hallmark/accounts';
import { createFilesystemBlobStore } from '@hallmark/blob-store';
import { createInProcessBus } from '@hallmark/bus';
import { createMemoryCache } from '@hallmark/cache';
import { createSqlEventStore } from '@hallmark/event-store';
import { createLogger, readConfig } from '@hallmark/runtime';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGatewayApp } from '../app.ts';
import { GatewayConfig } from '../config.ts';
import { maxLookUpsWaitingPerAddress } from './failed-auth-holds.ts';

// An address guessing keys, past its 20 failed authentications this minute: its guesses must not
// reach PostgreSQL faster than one at a time, while a valid key from it is still served.

const operatorSecret = `svc_live_${'d'.repeat(64)}`;
const unknownKey = () => `svc_live_${randomBytes(32).toString('hex')}`;
const isKeyLookUp = (text: string) => text.includes('WHERE k.key_hash = $1');

/** The database, with the key look-ups by hash counted, and the most that ran at once. */
function watched(db: SqlDatabase) {
  const stats = { lookUps: 0, inFlight: 0, mostInFlight: 0 };
  const wrapped: SqlDatabase = {
    ...db,
    async query(text, params) {
      if (!isKeyLookUp(text)) return db.query(text, params);
      stats.lookUps += 1;
      stats.inFlight += 1;
      stats.mostInFlight = Math.max(stats.mostInFlight, stats.inFlight);
      try {
        // As long as a busy database takes: look-ups that overlap show it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        return await db.query(text, params);
      } finally {
        stats.inFlight -= 1;
      }
    },
  };
  return { db: wrapped, stats };
}

describe('failed authentications of a held address (over HTTP, PostgreSQL)', () => {
  let test: Awaited<ReturnType<typeof connectTestDatabase>>;
  beforeAll(async () => {
    test = await connectTestDatabase('failed_auth_holds');
    await migrateAccounts(test.db);
    await ensureOperator({ db: test.db, eventStore: await createSqlEventStore(test.db) }, operatorSecret, new Date());
  });
  afterAll(() => test?.drop());

  it('refuses known-bad keys without a look-up, looks new keys up one at a time, and still serves a valid key', async () => {
    const { db, stats } = watched(test.db);
    const app = await buildGatewayApp({
      config: readConfig(GatewayConfig, {}),
      bus: createInProcessBus(),
      db,
      eventStore: undefined as never,
      cache: createMemoryCache(),
      blobs: createFilesystemBlobStore(join(tmpdir(), 'hallmark-test-blobs')),
      // Mid-minute, so the failures' minute lasts the whole test.
      clock: () => new Date('2032-01-08T09:00:10Z'),
      log: createLogger({ instance: 'test', level: 'silent' }),
      readiness: {},
      requestTimeoutMs: 1_000,
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const me = (key: string) => fetch(`http://127.0.0.1:${port}/api/v1/accounts/me`, { headers: { 'x-api-key': key } });

      const guessed = Array.from({ length: 20 }, unknownKey);
      for (const key of guessed) expect((await me(key)).status).toBe(401);
      const first = await me(unknownKey());
      expect(first.status).toBe(429);
      expect(first.headers.get('retry-after')).toBe('50');
      expect(stats.lookUps).toBe(21);

      // Held: a key already known to be unknown, and a malformed one, are refused without a look-up.
      for (const key of [guessed[0] as string, 'svc_live_nope']) {
        const refused = await me(key);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toBe('50');
        const body = (await refused.json()) as { error: { code: string; details: { limit: string } } };
        expect(body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 'failed-authentications-per-address' } });
      }
      expect(stats.lookUps).toBe(21);

      // New guesses all at once: looked up one at a time, at most 16 waiting; the others refused at
      // once (Retry-After 1), without a look-up.
      const burst = await Promise.all(Array.from({ length: 60 }, () => me(unknownKey())));
      expect(burst.every((response) => response.status === 429)).toBe(true);
      expect(stats.mostInFlight).toBe(1);
      const lookedUp = stats.lookUps - 21;
      expect(lookedUp).toBeGreaterThan(maxLookUpsWaitingPerAddress);
      const refusedAtOnce = burst.filter((response) => response.headers.get('retry-after') === '1');
      expect(refusedAtOnce.length).toBeGreaterThan(0);
      expect(refusedAtOnce).toHaveLength(60 - lookedUp);

      // A valid key from the same address (not cached yet) is looked up and served.
      const served = await me(operatorSecret);
      expect(served.status).toBe(200);
      expect(stats.lookUps).toBe(21 + lookedUp + 1);
    } finally {
      await app.close();
    }
  });
});
