import { ensureOperator, migrateAccounts } from '@hallmark/accounts';
import { createSqlEventStore } from '@hallmark/event-store';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from './authenticator.ts';

const secret = `svc_live_${'c'.repeat(64)}`;

/** The database, with every query counted. */
function counted(db: SqlDatabase): { db: SqlDatabase; queries: () => number } {
  let queries = 0;
  const wrapped: SqlDatabase = {
    ...db,
    query: (text, params) => {
      queries += 1;
      return db.query(text, params);
    },
  };
  return { db: wrapped, queries: () => queries };
}

describe('authenticator cache (PostgreSQL)', () => {
  let test: Awaited<ReturnType<typeof connectTestDatabase>>;
  beforeAll(async () => {
    test = await connectTestDatabase('authenticator');
    await migrateAccounts(test.db);
    await ensureOperator({ db: test.db, eventStore: await createSqlEventStore(test.db) }, secret, new Date());
  });
  afterAll(async () => {
    await test.drop();
  });

  it('looks a key up once for all the requests that arrive while it is not cached', async () => {
    const { db, queries } = counted(test.db);
    const authenticator = createAuthenticator({ db, clock: () => new Date() });
    const keys = await Promise.all(Array.from({ length: 50 }, () => authenticator.authenticate(secret)));
    expect(new Set(keys.map((key) => key.keyId)).size).toBe(1);
    expect(queries()).toBe(1);
    // Cached now: answered without a promise and without a query.
    expect(authenticator.authenticate(secret)).not.toBeInstanceOf(Promise);
    expect(queries()).toBe(1);
  });

  it('keeps a key in use through a flood of unknown keys (they are remembered apart)', async () => {
    const { db, queries } = counted(test.db);
    const authenticator = createAuthenticator({ db, clock: () => new Date(), maxEntries: 5 });
    await authenticator.authenticate(secret);
    for (let i = 0; i < 20; i++) {
      const unknown = `svc_live_${i.toString(16).padStart(64, 'a')}`;
      await expect(authenticator.authenticate(unknown)).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
    }
    expect(queries()).toBe(21);
    // Still known: no look-up.
    expect(authenticator.authenticate(secret)).not.toBeInstanceOf(Promise);
    expect(queries()).toBe(21);
  });

  it('does not keep a look-up that was under way when the key was forgotten', async () => {
    const { db, queries } = counted(test.db);
    const authenticator = createAuthenticator({ db, clock: () => new Date() });
    const during = authenticator.authenticate(secret);
    const keyId = (await during).keyId;
    const again = authenticator.authenticate(secret);
    expect(again).not.toBeInstanceOf(Promise);

    authenticator.forget(keyId);
    const refill = authenticator.authenticate(secret);
    authenticator.forget(keyId);
    await refill;
    // The refill began before the second forget, so it was not kept: the next request looks again.
    const next = authenticator.authenticate(secret);
    expect(next).toBeInstanceOf(Promise);
    await next;
    expect(queries()).toBe(3);
  });

  it('checks a key again by its id without a look-up while its secret is cached, and again after a forget', async () => {
    const { db, queries } = counted(test.db);
    const authenticator = createAuthenticator({ db, clock: () => new Date() });
    const { keyId } = await authenticator.authenticate(secret);
    expect(queries()).toBe(1);
    expect(authenticator.authenticateKeyId(keyId)).not.toBeInstanceOf(Promise);
    expect(queries()).toBe(1);
    authenticator.forget(keyId);
    const afterForget = authenticator.authenticateKeyId(keyId);
    expect(afterForget).toBeInstanceOf(Promise);
    await afterForget;
    expect(queries()).toBe(2);
  });
});
