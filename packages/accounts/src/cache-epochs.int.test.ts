import { ed25519PrivateKeyObject, generateEd25519KeyPair, signKeyRegistration } from '@hallmark/crypto';
import { createSqlEventStore } from '@hallmark/event-store';
import { connectTestDatabase, createPgliteDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionAccount } from './account-log.ts';
import { hashApiKeySecret } from './api-key-secret.ts';
import { findApiKeyByHash } from './api-key-store.ts';
import { writeBranding } from './branding.ts';
import { type CacheEpochs, watchCacheEpochs } from './cache-epochs.ts';
import { insertGtinClaim, newGtinClaim } from './gtin-claim-store.ts';
import { createGtinIssuers } from './gtin-issuers.ts';
import { createGtinSigners } from './gtin-signers.ts';
import { createVerificationKeys } from './keyring.ts';
import { migrateAccounts } from './migrate.ts';

// The cache epochs (#17, "the cache's version checked on use"): a change to a key or a claim made by
// any writer, here plain SQL as an operator or the CLI would, bumps its table's epoch in the same
// transaction, and a replica's cache stops serving what it loaded before within one poll.

const now = new Date('2026-11-25T12:00:00Z');

async function waitFor(condition: () => boolean | Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

/** The database, with a count of the statements sent through it. */
function countingStatements(db: SqlDatabase) {
  const counted = {
    statements: 0,
    db: {
      ...db,
      query: (text: string, params?: readonly unknown[]) => {
        counted.statements++;
        return db.query(text, params);
      },
    } as SqlDatabase,
  };
  return counted;
}

for (const kind of ['postgresql', 'pglite'] as const) {
  describe(`cache epochs (${kind})`, () => {
    let db: SqlDatabase;
    let drop: () => Promise<void>;
    let epochs: CacheEpochs;

    beforeAll(async () => {
      if (kind === 'postgresql') {
        const database = await connectTestDatabase('cache_epochs');
        db = database.db;
        drop = () => database.drop();
      } else {
        db = await createPgliteDatabase();
        drop = () => db.close();
      }
      await migrateAccounts(db);
      epochs = await watchCacheEpochs(db, { pollMs: 100 });
    });
    afterAll(async () => {
      await epochs?.stop();
      await drop?.();
    });

    it('bumps only the changed table’s epoch, in the changing statement’s transaction', async () => {
      const before = { keys: epochs.current('api_keys'), claims: epochs.current('gtin_claims') };
      const created = await provisionAccount(
        { db, eventStore: await createSqlEventStore(db) },
        { name: 'epoch brand', tier: 'starter', environment: 'live' },
        now,
      );
      await epochs.refresh();
      // A new key needs no bump: nobody can have cached it.
      expect(epochs.current('api_keys')).toBe(before.keys);

      await db
        .transaction(async (tx) => {
          await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [created.apiKey.id, now]);
          throw new Error('rolled back');
        })
        .catch(() => {});
      await epochs.refresh();
      expect(epochs.current('api_keys')).toBe(before.keys);

      await db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [created.apiKey.id, now]);
      await epochs.refresh();
      expect(epochs.current('api_keys')).toBe(before.keys + 1);
      expect(epochs.current('gtin_claims')).toBe(before.claims);
      expect(await findApiKeyByHash(db, hashApiKeySecret(created.apiKey.secret))).toMatchObject({ revokedAt: now });
    });

    it('a public key revoked by plain SQL (no broadcast) stops verifying from the cache within one poll', async () => {
      const keys = createVerificationKeys(db, { epochs, cacheMs: 60_000 });
      const created = await provisionAccount(
        { db, eventStore: await createSqlEventStore(db) },
        { name: 'epoch signer', tier: 'starter', environment: 'live' },
        now,
      );
      const owner = { accountId: created.account.id, environment: 'live' as const };
      const pair = generateEd25519KeyPair();
      const publicKey = pair.publicKey.toString('base64url');
      const proof = signKeyRegistration(ed25519PrivateKeyObject(pair), { ...owner, publicKey: pair.publicKey });
      const registered = await keys.register(owner, { name: 'external', publicKey, proof });
      expect((await keys.find(registered.id, owner))?.status).toBe('active');

      await db.query(`UPDATE verification_keys SET status = 'revoked', revoked_at = $2 WHERE id = $1`, [registered.id, now]);
      const tookMs = await waitFor(async () => (await keys.find(registered.id, owner))?.status === 'revoked', 1_000);
      expect(tookMs).toBeLessThan(1_000);
    });

    it('a brand’s issuer is remembered between scans, and renamed by plain SQL (no broadcast) within one poll', async () => {
      const created = await provisionAccount(
        { db, eventStore: await createSqlEventStore(db) },
        { name: 'epoch issuer', tier: 'starter', environment: 'live' },
        now,
      );
      const accountId = created.account.id;
      const gtin = '09506000134369';
      await insertGtinClaim(
        db,
        newGtinClaim({ accountId, environment: 'live', target: { kind: 'gtin', value: gtin }, source: 'granted' }, now),
        accountId,
      );
      await writeBranding(db, { accountId, environment: 'live' }, { displayName: 'Before' }, now);
      await epochs.refresh();
      // Statements the issuers send, counted through a wrapper of the database.
      const counted = countingStatements(db);
      const issuers = createGtinIssuers(counted.db, { epochs, cacheMs: 60_000 });
      const scans = await Promise.all(Array.from({ length: 20 }, () => issuers.issuerOf('live', gtin)));
      expect(scans.every((issuer) => issuer?.accountId === accountId && issuer.name === 'Before')).toBe(true);
      expect(await issuers.issuerOf('live', gtin)).toMatchObject({ name: 'Before' });
      expect(counted.statements).toBe(1);

      await db.query(`UPDATE account_branding SET display_name = 'After' WHERE account_id = $1`, [accountId]);
      const tookMs = await waitFor(async () => (await issuers.issuerOf('live', gtin))?.name === 'After', 1_000);
      expect(tookMs).toBeLessThan(1_000);
      // A claim revoked by plain SQL: the page names nobody within one poll as well.
      await db.query('UPDATE gtin_claims SET revoked_at = $2 WHERE account_id = $1', [accountId, now]);
      await waitFor(async () => (await issuers.issuerOf('live', gtin)) === undefined, 1_000);
      // A broadcast's forgetAll: the next scan asks again at once.
      const before = counted.statements;
      issuers.forgetAll();
      await issuers.issuerOf('live', gtin);
      expect(counted.statements).toBe(before + 1);
    });

    it('a claim made (no broadcast) drops only what was remembered of GTINs nobody owned; a claim ended drops all', async () => {
      const owner = (
        await provisionAccount(
          { db, eventStore: await createSqlEventStore(db) },
          { name: 'epoch owner', tier: 'starter', environment: 'live' },
          now,
        )
      ).account.id;
      const owned = '09506000134383';
      const free = '09506000134390';
      await insertGtinClaim(
        db,
        newGtinClaim({ accountId: owner, environment: 'live', target: { kind: 'gtin', value: owned }, source: 'granted' }, now),
        owner,
      );
      await epochs.refresh();
      const counted = countingStatements(db);
      const signers = createGtinSigners(counted.db, { epochs, cacheMs: 60_000 });
      expect(await signers.signerOf('live', owned)).toEqual({ accountId: owner, owned: true });
      expect((await signers.signerOf('live', free))?.owned ?? false).toBe(false);
      expect(counted.statements).toBe(2);

      // Another tenant registers an object (its claim on a GTIN of its own), by plain SQL: no broadcast.
      const added = epochs.current('gtin_claims_added');
      const claims = epochs.current('gtin_claims');
      await db.query(
        `INSERT INTO gtin_claims (id, account_id, environment, kind, value, source) VALUES ('gtc_epoch_other', $1, 'live', 'gtin', '02000000000015', 'registered')`,
        [owner],
      );
      await waitFor(() => epochs.current('gtin_claims_added') > added, 1_000);
      expect(epochs.current('gtin_claims')).toBe(claims);
      expect(await signers.signerOf('live', owned)).toEqual({ accountId: owner, owned: true });
      expect(counted.statements).toBe(2);
      await signers.signerOf('live', free);
      expect(counted.statements).toBe(3);

      // A claim on the free GTIN: its signer is the new owner within one poll.
      await db.query(
        `INSERT INTO gtin_claims (id, account_id, environment, kind, value, source) VALUES ('gtc_epoch_free', $1, 'live', 'gtin', $2, 'granted')`,
        [owner, free],
      );
      await waitFor(async () => (await signers.signerOf('live', free))?.owned === true, 1_000);
      // A claim ended: every entry goes, the owned one too.
      await db.query(`UPDATE gtin_claims SET revoked_at = $1 WHERE id = 'gtc_epoch_other'`, [now]);
      await waitFor(() => epochs.current('gtin_claims') > claims, 1_000);
      const before = counted.statements;
      await signers.signerOf('live', owned);
      expect(counted.statements).toBe(before + 1);
    });

    it('keeps the last epochs when a poll fails, and says so', async () => {
      const errors: unknown[] = [];
      const failing = await watchCacheEpochs(db, { pollMs: 50, onError: (error) => errors.push(error) });
      const seen = failing.current('api_keys');
      await db.query('ALTER TABLE cache_epochs RENAME TO cache_epochs_away');
      try {
        await waitFor(() => errors.length > 0, 2_000);
        expect(failing.current('api_keys')).toBe(seen);
      } finally {
        await db.query('ALTER TABLE cache_epochs_away RENAME TO cache_epochs');
        await failing.stop();
      }
    });
  });
}
