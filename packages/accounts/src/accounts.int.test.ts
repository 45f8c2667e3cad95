import type { Principal } from '@hallmark/contracts';
import {
  ed25519PrivateKeyObject,
  ed25519PublicKeyObject,
  generateEd25519KeyPair,
  signKeyRegistration,
  verifyEd25519,
} from '@hallmark/crypto';
import { createSqlEventStore } from '@hallmark/event-store';
import { connectTestDatabase, type SqlDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AccountLogDeps,
  ensureOperator,
  provisionAccount,
  recordApiKeyCreation,
  recordApiKeyRevocation,
  recordApiKeyRotation,
} from './account-log.ts';
import { hashApiKeySecret } from './api-key-secret.ts';
import { findApiKeyByHash } from './api-key-store.ts';
import type { AuthenticatedKey } from './authenticated-key.ts';
import { listKeys } from './key-listing.ts';
import { createSigningKeyring, createVerificationKeys } from './keyring.ts';
import { migrateAccounts } from './migrate.ts';

let database: { db: SqlDatabase; drop(): Promise<void> };
let db: SqlDatabase;
let log: AccountLogDeps;
const now = new Date('2026-11-21T12:00:00Z');
const masterKey = Buffer.alloc(32, 9);

beforeAll(async () => {
  database = await connectTestDatabase('accounts');
  db = database.db;
  await migrateAccounts(db);
  log = { db, eventStore: await createSqlEventStore(db) };
});
afterAll(async () => {
  await database.drop();
});

async function tenant(name: string) {
  const created = await provisionAccount(log, { name, tier: 'starter', environment: 'live' }, now);
  const record = await findApiKeyByHash(db, hashApiKeySecret(created.apiKey.secret));
  if (!record) throw new Error('key not stored');
  const key: AuthenticatedKey = {
    keyId: record.id,
    accountId: record.accountId,
    environment: record.environment,
    scopes: record.scopes,
    isOperator: record.isOperator,
    tier: record.tier,
    expiresAt: record.expiresAt,
    restrictions: record.restrictions,
  };
  return { created, key };
}

describe('accounts and API keys', () => {
  it('provisions an account with a first key of scope * that is stored only as a hash', async () => {
    const { created } = await tenant('Maison A');
    expect(created.account).toMatchObject({ name: 'Maison A', tier: 'starter' });
    expect(created.apiKey).toMatchObject({ type: 'api', scopes: ['*'], environment: 'live', status: 'active' });
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [created.apiKey.id]);
    expect(JSON.stringify(rows)).not.toContain(created.apiKey.secret);
    expect(rows[0]?.key_hash).toBe(hashApiKeySecret(created.apiKey.secret));
  });

  it('refuses to grant scopes the creator lacks, and live keys to a test key', async () => {
    const { key } = await tenant('Maison B');
    const reader = await recordApiKeyCreation(log, key, { name: 'reader', scopes: ['assets:read', 'keys:write'] }, now);
    const readerKey = { ...key, keyId: reader.id, scopes: reader.scopes as AuthenticatedKey['scopes'] };
    await expect(
      recordApiKeyCreation(log, readerKey, { name: 'escalate', scopes: ['assets:create'] }, now),
    ).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required: ['assets:create'], granted: ['assets:read', 'keys:write'] },
    });
    await expect(recordApiKeyCreation(log, readerKey, { name: 'star', scopes: ['*'] }, now)).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
    });
    await expect(recordApiKeyCreation(log, key, { name: 'operator', scopes: ['accounts:write'] }, now)).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
    });
    const testKey = { ...key, environment: 'test' as const };
    await expect(
      recordApiKeyCreation(log, testKey, { name: 'live', scopes: ['assets:read'], environment: 'live' }, now),
    ).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
    });
    expect(
      (await recordApiKeyCreation(log, key, { name: 'sandbox', scopes: ['assets:read'], environment: 'test' }, now)).environment,
    ).toBe('test');
  });

  it('sets expiry from expiresIn, refuses a bad one, and never past the creator’s own', async () => {
    const { key } = await tenant('Maison C');
    const ninety = await recordApiKeyCreation(log, key, { name: 'q', scopes: ['assets:read'], expiresIn: '90d' }, now);
    expect(ninety.expiresAt).toBe(new Date(now.getTime() + 90 * 86_400_000).toISOString());
    await expect(
      recordApiKeyCreation(log, key, { name: 'q', scopes: ['assets:read'], expiresIn: '90 days' }, now),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [expect.objectContaining({ field: 'expiresIn' })] },
    });
    const shortLived = { ...key, expiresAt: new Date(now.getTime() + 3_600_000) };
    const child = await recordApiKeyCreation(log, shortLived, { name: 'child', scopes: ['assets:read'] }, now);
    expect(child.expiresAt).toBe(shortLived.expiresAt.toISOString());
  });

  it('revokes only its own account’s keys', async () => {
    const a = await tenant('Maison D');
    const b = await tenant('Maison E');
    expect(await recordApiKeyRevocation(log, b.key, a.created.apiKey.id, now, b.key)).toBeUndefined();
    const revoked = await recordApiKeyRevocation(log, a.key, a.created.apiKey.id, now, a.key);
    expect(revoked?.revokedAt?.toISOString()).toBe(now.toISOString());
    const again = await recordApiKeyRevocation(log, a.key, a.created.apiKey.id, new Date(now.getTime() + 1000), a.key);
    expect(again?.revokedAt?.toISOString()).toBe(now.toISOString());
  });

  it('lists keys newest first in pages, with no secret, and only the caller’s', async () => {
    const { key } = await tenant('Maison F');
    for (let i = 0; i < 12; i++) await recordApiKeyCreation(log, key, { name: `k${i}`, scopes: ['assets:read'] }, now);
    await tenant('Maison G');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listKeys(db, key, { limit: 5, ...(cursor ? { cursor } : {}) }, now);
      expect(JSON.stringify(page)).not.toMatch(/svc_live_[0-9a-f]{64}/);
      seen.push(...page.keys.map((entry) => entry.id));
      cursor = page.pagination.nextCursor ?? undefined;
      expect(page.pagination.hasMore).toBe(cursor !== undefined);
    } while (cursor);
    expect(seen).toHaveLength(13);
    expect(new Set(seen).size).toBe(13);
    await expect(listKeys(db, key, { limit: 5, cursor: 'bm9wZQ' }, now)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('bootstraps one operator, idempotently, even when replicas start together', async () => {
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => ensureOperator(log, undefined, now)));
    expect(outcomes.filter((outcome) => outcome.kind === 'generated')).toHaveLength(1);
    expect(new Set(outcomes.map((outcome) => outcome.accountId)).size).toBe(1);
    const secret = `svc_live_${'ab'.repeat(32)}`;
    expect(await ensureOperator(log, secret, now)).toMatchObject({ kind: 'added' });
    expect(await ensureOperator(log, secret, now)).toMatchObject({ kind: 'existing' });
    const operatorKey = await findApiKeyByHash(db, hashApiKeySecret(secret));
    expect(operatorKey).toMatchObject({ isOperator: true, tier: 'enterprise', scopes: ['*'] });
    await expect(ensureOperator(log, 'svc_live_nothex', now)).rejects.toThrow(/HALLMARK_BOOTSTRAP_KEY/);
  });
});

describe('keyring', () => {
  it('makes one signing key on first use, even under concurrency, sealed at rest', async () => {
    const { key } = await tenant('Signer A');
    const keyring = createSigningKeyring(db, masterKey, { cacheMs: 0 });
    const keys = await Promise.all(Array.from({ length: 8 }, () => keyring.activeSigningKey(key)));
    expect(new Set(keys.map((signing) => signing.kid)).size).toBe(1);
    const rows = await db.query<{ sealed_private_key: string; public_key: string }>(
      `SELECT sealed_private_key, public_key FROM verification_keys WHERE account_id = $1`,
      [key.accountId],
    );
    expect(rows).toHaveLength(1);
    await expect(createSigningKeyring(db, Buffer.alloc(32, 1), { cacheMs: 0 }).activeSigningKey(key)).rejects.toThrow();
  });

  it('builds the public key set once for the requests that find it gone together', async () => {
    const { key } = await tenant('Published brand');
    await createSigningKeyring(db, masterKey, { cacheMs: 0 }).activeSigningKey(key);
    let statements = 0;
    const counted = {
      ...db,
      query: (text: string, params?: readonly unknown[]) => {
        statements++;
        return db.query(text, params);
      },
    } as SqlDatabase;
    const verification = createVerificationKeys(counted, { cacheMs: 60_000 });
    // As after any claim anywhere (gtins.ownership-changed): the set is gone, and downloads come at once.
    verification.republish();
    const sets = await Promise.all(Array.from({ length: 20 }, () => verification.jwks()));
    expect(statements).toBe(2); // the keys and the claims, once
    expect(new Set(sets).size).toBe(1);
    expect(sets[0]?.keys.some((jwk) => jwk.hallmark_account === key.accountId)).toBe(true);
  });

  it('rotates: the new key signs, the old one keeps verifying, both are published', async () => {
    const { key } = await tenant('Signer B');
    const keyring = createSigningKeyring(db, masterKey, { cacheMs: 0 });
    const verification = createVerificationKeys(db, { cacheMs: 0 });
    const old = await keyring.activeSigningKey(key);
    const message = Buffer.from('gtin=09506000134352;serial=ABC');
    const oldSignature = old.sign(message);
    const rotated = await keyring.rotate(key);
    expect(rotated).toMatchObject({ type: 'signing', status: 'active' });
    expect((await keyring.activeSigningKey(key)).kid).toBe(rotated.id);
    const oldEntry = await verification.find(old.kid);
    expect(oldEntry?.status).toBe('retired');
    expect(verifyEd25519(oldEntry!.keyObject, message, oldSignature)).toBe(true);
    const kids = (await verification.jwks()).keys.map((jwk) => jwk.kid);
    expect(kids).toEqual(expect.arrayContaining([old.kid, rotated.id]));
    const listed = await listKeys(db, key, { limit: 10, type: 'signing' }, now);
    expect(listed.keys.map((entry) => [entry.id, entry.status])).toEqual(
      expect.arrayContaining([
        [old.kid, 'retired'],
        [rotated.id, 'active'],
      ]),
    );
  });

  /** A registration of `pair`'s public key for `owner`, with its proof of possession. */
  const registration = (owner: Principal, pair: ReturnType<typeof generateEd25519KeyPair>, name = 'HSM key') => ({
    name,
    publicKey: pair.publicKey.toString('base64url'),
    proof: signKeyRegistration(ed25519PrivateKeyObject(pair), { ...owner, publicKey: pair.publicKey }),
  });

  it('registers external public keys (raw or PEM), refuses others, and unpublishes a revoked one', async () => {
    const { key } = await tenant('Brand C');
    const other = await tenant('Brand D');
    const verification = createVerificationKeys(db, { cacheMs: 0 });
    const pair = generateEd25519KeyPair();
    const registered = await verification.register(key, registration(key, pair));
    expect(registered).toMatchObject({ type: 'public', name: 'HSM key', status: 'active' });
    const pemPair = generateEd25519KeyPair();
    const pem = ed25519PublicKeyObject(pemPair.publicKey).export({ format: 'pem', type: 'spki' }).toString();
    expect((await verification.register(key, { ...registration(key, pemPair, 'PEM key'), publicKey: pem })).type).toBe('public');
    await expect(verification.register(key, registration(key, pair, 'dup'))).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(verification.register(key, { ...registration(key, pair, 'bad'), publicKey: 'not-a-key' })).rejects.toMatchObject(
      {
        code: 'VALIDATION_ERROR',
      },
    );
    expect(await verification.revoke(other.key, registered.id, now)).toBeUndefined();
    expect((await verification.revoke(key, registered.id, now))?.status).toBe('revoked');
    expect((await verification.jwks()).keys.map((jwk) => jwk.kid)).not.toContain(registered.id);
  });

  it('refuses a proof made for another account, environment or key, storing nothing', async () => {
    const { key } = await tenant('Brand E');
    const other = await tenant('Brand F');
    const verification = createVerificationKeys(db, { cacheMs: 0 });
    const pair = generateEd25519KeyPair();
    const refusals = [
      // Made for another account, for the other environment, by another key, or no signature at all.
      { ...registration(key, pair), proof: registration(other.key, pair).proof },
      { ...registration(key, pair), proof: registration({ ...key, environment: 'test' }, pair).proof },
      { ...registration(key, pair), proof: registration(key, generateEd25519KeyPair()).proof },
      { ...registration(key, pair), proof: 'A'.repeat(86) },
    ];
    for (const body of refusals) {
      await expect(verification.register(key, body)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [expect.objectContaining({ field: 'proof' })] },
      });
    }
    const rows = await db.query('SELECT 1 FROM verification_keys WHERE account_id = $1 AND type = $2', [key.accountId, 'public']);
    expect(rows).toHaveLength(0);
  });

  it('holds one key in both environments of an account, registers a revoked one again, and refuses it to a second account', async () => {
    const { key } = await tenant('Brand G');
    const other = await tenant('Brand H');
    const verification = createVerificationKeys(db, { cacheMs: 0 });
    const pair = generateEd25519KeyPair();
    const live = await verification.register(key, registration(key, pair));
    const testOwner = { ...key, environment: 'test' as const };
    const test = await verification.register(testOwner, registration(testOwner, pair));
    expect([live.environment, test.environment]).toEqual(['live', 'test']);
    expect(test.id).toBe(live.id);
    expect((await verification.find(live.id, key))?.environment).toBe('live');
    expect((await verification.find(live.id, testOwner))?.environment).toBe('test');
    const published = (await verification.jwks()).keys.filter((jwk) => jwk.kid === live.id);
    expect(published.map((jwk) => [jwk.hallmark_account, jwk.hallmark_environment])).toEqual([
      [key.accountId, 'live'],
      [key.accountId, 'test'],
    ]);

    // Another account that holds the private key too: the same refusal as the owner's own duplicate, naming nobody.
    const owners = await Promise.allSettled([
      verification.register(key, registration(key, pair)),
      verification.register(other.key, registration(other.key, pair)),
    ]);
    const [own, foreign] = owners.map((settled) => (settled.status === 'rejected' ? settled.reason : settled.value));
    expect(own).toMatchObject({ code: 'CONFLICT', message: 'This public key is already registered.' });
    expect(foreign).toMatchObject({ code: 'CONFLICT', message: own.message });
    expect(foreign.details).toEqual(own.details);
    expect(JSON.stringify(foreign)).not.toContain(key.accountId);

    // Revoked in live: registered again, the same id, active; the test registration never changed.
    expect((await verification.revoke(key, live.id, now))?.status).toBe('revoked');
    expect((await verification.find(live.id, testOwner))?.status).toBe('active');
    const again = await verification.register(key, registration(key, pair, 'HSM key again'));
    expect(again).toMatchObject({ id: live.id, name: 'HSM key again', status: 'active', revokedAt: null });
    expect((await verification.find(live.id, key))?.status).toBe('active');
  });

  it('takes a registration without a proof, which reserves the key for nobody', async () => {
    const { key } = await tenant('Brand K');
    const other = await tenant('Brand L');
    const verification = createVerificationKeys(db, { cacheMs: 0 });
    const pair = generateEd25519KeyPair();
    const { proof: _none, ...bare } = registration(key, pair);
    const unproven = await verification.register(key, bare);
    expect(unproven).toMatchObject({ type: 'public', status: 'active' });
    const rows = await db.query<{ proof: string | null }>(
      'SELECT proof FROM verification_keys WHERE id = $1 AND account_id = $2',
      [unproven.id, key.accountId],
    );
    expect(rows).toEqual([{ proof: null }]);
    // Active for its owner: a second registration of it there is a conflict, with or without a proof.
    await expect(verification.register(key, bare)).rejects.toMatchObject({ code: 'CONFLICT' });
    // Another account may still register it, and with a proof holds it alone from then on.
    const proven = await verification.register(other.key, registration(other.key, pair));
    expect(proven).toMatchObject({ id: unproven.id, status: 'active' });
    const third = await tenant('Brand M');
    const { proof: _also, ...bareThird } = registration(third.key, pair);
    await expect(verification.register(third.key, bareThird)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('lets a key holder register a key another account registered without a proof, or gave up', async () => {
    const { key } = await tenant('Brand I');
    const squatter = await tenant('Squatter');
    const verification = createVerificationKeys(db, { cacheMs: 0 });
    const pair = generateEd25519KeyPair();
    const { publicKey } = registration(key, pair);
    // As a registration without a proof (or made before proofs existed) left it.
    const { proof: _none, ...bare } = registration(squatter.key, pair);
    const kid = (await verification.register(squatter.key, bare)).id;
    const registered = await verification.register(key, { ...registration(key, pair), publicKey });
    expect(registered).toMatchObject({ id: kid, status: 'active' });
    expect((await verification.find(kid, key))?.accountId).toBe(key.accountId);
    // The brand revokes its key: a holder of the private key may register it in another account.
    const holder = await tenant('New holder');
    await expect(verification.register(holder.key, registration(holder.key, pair))).rejects.toMatchObject({ code: 'CONFLICT' });
    await verification.revoke(key, kid, now);
    expect((await verification.register(holder.key, registration(holder.key, pair))).status).toBe('active');
  });

  it('records the API key that registered a public key, and lists it with ?createdBy', async () => {
    const { key } = await tenant('Brand J');
    const verification = createVerificationKeys(db, { cacheMs: 0 });
    const maker = await recordApiKeyCreation(log, key, { name: 'maker', scopes: ['keys:write'] }, now);
    const pair = generateEd25519KeyPair();
    const registered = await verification.register(key, registration(key, pair), { keyId: maker.id, now });
    expect(registered.createdBy).toBe(maker.id);
    const made = await recordApiKeyCreation(
      log,
      { ...key, keyId: maker.id, scopes: ['keys:write'] },
      { name: 'made', scopes: ['keys:write'] },
      now,
    );
    const listed = await listKeys(db, key, { limit: 10, createdBy: maker.id }, now);
    expect(listed.keys.map((entry) => entry.id).sort()).toEqual([made.id, registered.id].sort());
    // Registered again after a revocation: the new registration's creator.
    await verification.revoke(key, registered.id, now);
    expect((await verification.register(key, registration(key, pair), { keyId: key.keyId, now })).createdBy).toBe(key.keyId);
  });
});

describe('a key revoked after the gateway checked it', () => {
  // The gateway checks the key as the request comes and again once its body is read; a revocation
  // can still land between that check and the write. The write checks the acting key in its own
  // transaction, holding the key's row, so the revoked key makes nothing.
  const registration = (owner: Principal, pair: ReturnType<typeof generateEd25519KeyPair>) => ({
    name: 'late key',
    publicKey: pair.publicKey.toString('base64url'),
    proof: signKeyRegistration(ed25519PrivateKeyObject(pair), { ...owner, publicKey: pair.publicKey }),
  });

  it('creates, rotates, registers and revokes nothing, and leaves no row', async () => {
    const { key } = await tenant('Leaked Ltd');
    const thief = await recordApiKeyCreation(log, key, { name: 'leaked', scopes: ['*'] }, now);
    const other = await recordApiKeyCreation(log, key, { name: 'other', scopes: ['assets:read'] }, now);
    // What the gateway authenticated before the owner's revocation.
    const checked: AuthenticatedKey = { ...key, keyId: thief.id };
    await recordApiKeyRevocation(log, key, thief.id, now, key);
    const keysBefore = await db.query('SELECT id FROM api_keys WHERE account_id = $1', [key.accountId]);

    await expect(recordApiKeyCreation(log, checked, { name: 'backdoor', scopes: ['*'] }, now)).rejects.toMatchObject({
      code: 'REVOKED_API_KEY',
    });
    await expect(recordApiKeyRotation(log, key, other.id, 0, now, checked)).rejects.toMatchObject({ code: 'REVOKED_API_KEY' });
    await expect(recordApiKeyRevocation(log, key, other.id, now, checked)).rejects.toMatchObject({ code: 'REVOKED_API_KEY' });
    const pair = generateEd25519KeyPair();
    await expect(
      createVerificationKeys(db, { cacheMs: 0 }).register(key, registration(key, pair), { keyId: thief.id, now }),
    ).rejects.toMatchObject({ code: 'REVOKED_API_KEY' });

    expect(await db.query('SELECT id FROM api_keys WHERE account_id = $1', [key.accountId])).toEqual(keysBefore);
    expect(await db.query('SELECT id FROM verification_keys WHERE account_id = $1', [key.accountId])).toEqual([]);
    const untouched = await findApiKeyByHash(db, hashApiKeySecret(other.secret));
    expect(untouched).toMatchObject({ revokedAt: null, expiresAt: null });
  });

  it('refuses an expired acting key the same way, and lets a working key rotate itself', async () => {
    const { key } = await tenant('Expired Ltd');
    const shortLived = await recordApiKeyCreation(log, key, { name: 'short', scopes: ['*'], expiresIn: '1h' }, now);
    const later = new Date(now.getTime() + 2 * 3600_000);
    await expect(
      recordApiKeyCreation(log, { ...key, keyId: shortLived.id }, { name: 'x', scopes: ['assets:read'] }, later),
    ).rejects.toMatchObject({ code: 'EXPIRED_API_KEY' });
    const rotated = await recordApiKeyRotation(log, key, key.keyId, 900, now, key);
    expect(rotated.replaced).toEqual({ id: key.keyId, expiresAt: new Date(now.getTime() + 900_000).toISOString() });
    expect(rotated.created.createdBy).toBe(key.keyId);
  });
});
