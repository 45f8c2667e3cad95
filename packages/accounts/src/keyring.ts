import type { KeyObject } from 'node:crypto';
import { type Environment, HallmarkError, type Jwks, type Principal, type VerificationKeyView } from '@hallmark/contracts';
import {
  ed25519PrivateKeyObject,
  ed25519PublicKeyObject,
  ed25519Thumbprint,
  generateEd25519KeyPair,
  open,
  parseEd25519PublicKey,
  seal,
  signEd25519,
  signEd25519InThreadPool,
  verifyKeyRegistrationProof,
} from '@hallmark/crypto';
import type { SqlDatabase } from '@hallmark/sql';
import { lockActingKey } from './api-key-store.ts';
import { type CacheEpochs, fixedCacheEpochs } from './cache-epochs.ts';
import { listActiveGtinClaims } from './gtin-claim-store.ts';
import { publishedKeySet } from './published-key-set.ts';
import { createSingleFlight } from './single-flight.ts';
import {
  countActivePublicKeys,
  findActiveSigningKey,
  findKeyRegistrations,
  findVerificationKey,
  insertActiveSigningKey,
  insertPublicKey,
  listPublishableKeys,
  reactivatePublicKey,
  retireActiveSigningKey,
  revokePublicKey,
  signingKeysMadeInADay,
  toVerificationKeyView,
  type VerificationKeyRow,
} from './verification-key-store.ts';

/**
 * Registered public keys an account may have active per environment. A code with no record here is
 * checked under each of them (verify-code.ts), so their number bounds what a forged link costs.
 */
export const maxActivePublicKeys = 20;

/**
 * Signing keys made for an account and environment in any 24 hours (its first, and one a rotation):
 * enough to replace a leaked key, and its replacement, several times over; beyond, a rotation is
 * 429 RATE_LIMITED with Retry-After. Every key ever active stays published, so without it rotations
 * grew the public key set every offline verifier downloads without bound.
 */
export const maxSigningKeysPerDay = 10;

/** Kids whose look-ups a process keeps (found or not); the first looked up goes first past it. */
const maxCachedKids = 50_000;

/** The sealed private key is bound to its key id, so a sealed value cannot be moved to another row. */
const sealContext = (kid: string) => `hallmark:signing-key:${kid}`;

export interface SigningKey {
  kid: string;
  /** The raw 32-byte Ed25519 public key. */
  publicKey: Buffer;
  sign(message: Uint8Array): Buffer;
  /** `sign` in libuv's thread pool: many signatures at once spread over every core. */
  signInThreadPool(message: Uint8Array): Promise<Buffer>;
}

export interface PublicKeyEntry {
  kid: string;
  accountId: string;
  environment: Environment;
  type: 'signing' | 'public';
  status: 'active' | 'retired' | 'revoked';
  keyObject: KeyObject;
}

/**
 * Service-managed signing keys: one active Ed25519 key per account and environment, made on first
 * use, its private half sealed with AES-256-GCM under the master key. Needs the master key; the
 * gateway, which only lists and publishes keys, uses `VerificationKeys` instead.
 */
export function createSigningKeyring(
  db: SqlDatabase,
  masterKey: Uint8Array,
  options: { cacheMs?: number; epochs?: CacheEpochs; onNewKey?: (kid: string, owner: Principal) => Promise<void> | void } = {},
) {
  // Replicas hear of a rotation over the bus (`forgetActive`) at once, and through the
  // `verification_keys` epoch (checked on use) within a second when the broadcast was lost.
  const cacheMs = options.cacheMs ?? 5_000;
  const epochs = options.epochs ?? fixedCacheEpochs;
  const active = new Map<string, { key: SigningKey; until: number; epoch: number }>();
  // Requests that find the key expired together share one load (per epoch: a rotation starts another).
  const activeLoads = createSingleFlight<SigningKey>();
  const ownerKey = (owner: Principal) => `${owner.accountId}/${owner.environment}`;

  const unseal = (row: VerificationKeyRow): SigningKey => {
    const privateKey = open(masterKey, Buffer.from(row.sealed_private_key ?? '', 'base64url'), sealContext(row.id));
    const publicKey = Buffer.from(row.public_key, 'base64url');
    const keyObject = ed25519PrivateKeyObject({ publicKey, privateKey });
    return {
      kid: row.id,
      publicKey,
      sign: (message) => signEd25519(keyObject, message),
      signInThreadPool: (message) => signEd25519InThreadPool(keyObject, message),
    };
  };

  const newSealedKey = () => {
    const pair = generateEd25519KeyPair();
    const kid = ed25519Thumbprint(pair.publicKey);
    return {
      kid,
      publicKey: pair.publicKey.toString('base64url'),
      sealedPrivateKey: seal(masterKey, pair.privateKey, sealContext(kid)).toString('base64url'),
    };
  };

  const loadActiveSigningKey = async (owner: Principal): Promise<SigningKey> => {
    let row = await findActiveSigningKey(db, owner);
    if (!row) {
      // Two replicas may race to make the first key; the unique index lets one win and both read it.
      const fresh = newSealedKey();
      if (await insertActiveSigningKey(db, owner, fresh)) await options.onNewKey?.(fresh.kid, owner);
      row = await findActiveSigningKey(db, owner);
      if (!row) throw new Error('The active signing key vanished while it was being created.');
    }
    return unseal(row);
  };

  return {
    /** The key new codes are signed with; made when the account has none. Cached for `cacheMs`. */
    async activeSigningKey(owner: Principal): Promise<SigningKey> {
      const cached = active.get(ownerKey(owner));
      const epoch = epochs.current('verification_keys');
      if (cached && cached.until > Date.now() && cached.epoch >= epoch) return cached.key;
      return activeLoads.run(
        `${ownerKey(owner)}@${epoch}`,
        () => loadActiveSigningKey(owner),
        (key) => active.set(ownerKey(owner), { key, until: Date.now() + cacheMs, epoch }),
      );
    },

    /** Retires the active key and makes a new one active. Earlier keys stay published and keep verifying. */
    async rotate(owner: Principal): Promise<VerificationKeyView> {
      const created = await db.transaction(async (tx) => {
        await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`hallmark:signing:${ownerKey(owner)}`]);
        const made = await signingKeysMadeInADay(tx, owner);
        if (made.count >= maxSigningKeysPerDay) {
          throw new HallmarkError(
            'RATE_LIMITED',
            `${maxSigningKeysPerDay} signing keys were made for this account and environment in the last 24 hours (its first and its rotations), the most there may be.`,
            { limit: maxSigningKeysPerDay, retryAfterSeconds: Math.max(1, Math.ceil(made.freeInSeconds)) },
          );
        }
        await retireActiveSigningKey(tx, owner);
        const fresh = newSealedKey();
        await insertActiveSigningKey(tx, owner, fresh);
        return findVerificationKey(tx, fresh.kid, owner);
      });
      if (!created) throw new Error('The new signing key was not stored.');
      active.delete(ownerKey(owner));
      activeLoads.forget();
      await options.onNewKey?.(created.id, owner);
      return toVerificationKeyView(created);
    },

    /** Drops the owner's cached active key: another replica made or rotated it (broadcast `signingKeyAdded`). */
    forgetActive(owner: Principal): void {
      active.delete(ownerKey(owner));
      activeLoads.forget();
    },

    /** The handler of the `signingKeyAdded` broadcast: `{ kid, accountId, environment }`. */
    onSigningKeyAdded(payload: unknown): void {
      const { accountId, environment } = (payload ?? {}) as Partial<Principal>;
      if (typeof accountId === 'string' && (environment === 'live' || environment === 'test')) {
        active.delete(ownerKey({ accountId, environment }));
        activeLoads.forget();
      }
    },
  };
}
export type SigningKeyring = ReturnType<typeof createSigningKeyring>;

/** Why a registration is refused when the key is held already: the same words whoever holds it, so they tell no one of another account. */
const alreadyRegistered = () => new HallmarkError('CONFLICT', 'This public key is already registered.');

/**
 * Public keys by kid and owner, for verification and publication. KeyObjects are built once
 * (through JWK) and kept; a revoked public key is forgotten by `forget`, which revocation
 * broadcasts call.
 */
export function createVerificationKeys(db: SqlDatabase, options: { cacheMs?: number; epochs?: CacheEpochs } = {}) {
  const cacheMs = options.cacheMs ?? 60_000;
  const epochs = options.epochs ?? fixedCacheEpochs;
  // kid → (owner `account/environment`, or `*` for a lookup without one) → entry.
  const byKid = new Map<string, Map<string, { entry: PublicKeyEntry | undefined; until: number; epoch: number }>>();
  // The published set also says who may sign which GTINs, so it is as old as the older of its two epochs.
  let published: { jwks: Jwks; until: number; keysEpoch: number; claimsEpoch: number } | undefined;
  const builds = createSingleFlight<Jwks>();

  return {
    /**
     * The key `kid` of `owner` (its account and environment): one public key may be registered by
     * an account in both environments, so a verifier names whose key it expects. Without an owner,
     * the signing key of that kid, or the only row holding it (`findVerificationKey`).
     */
    async find(kid: string, owner?: Principal): Promise<PublicKeyEntry | undefined> {
      const scope = owner ? `${owner.accountId}/${owner.environment}` : '*';
      const cached = byKid.get(kid)?.get(scope);
      const epoch = epochs.current('verification_keys');
      if (cached && cached.until > Date.now() && cached.epoch >= epoch) return cached.entry;
      const row = await findVerificationKey(db, kid, owner);
      const entry = row
        ? {
            kid: row.id,
            accountId: row.account_id,
            environment: row.environment,
            type: row.type,
            status: row.status,
            keyObject: ed25519PublicKeyObject(Buffer.from(row.public_key, 'base64url')),
          }
        : undefined;
      let scopes = byKid.get(kid);
      if (!scopes) {
        // Bounded: a kid looked up is anyone's to name (DELETE /keys/{id} looks its id up), and each
        // kid never found stayed here; past the bound the kid looked up longest ago goes.
        if (byKid.size >= maxCachedKids) byKid.delete(byKid.keys().next().value as string);
        byKid.set(kid, (scopes = new Map()));
      }
      scopes.set(scope, { entry, until: Date.now() + (entry ? cacheMs : 5_000), epoch });
      return entry;
    },

    /**
     * The owner's keys a code with no record here (no code, no auction object) is checked under,
     * newest first: its active registered public keys (codes signed outside Hallmark), at most
     * maxActivePublicKeys, and its active signing key (what was signed a moment ago may not be on
     * record yet). Never a signing key rotated out: it signs nothing more, and what it signed is on
     * record, so a leaked key, once rotated, makes no new serial AUTHENTIC.
     */
    async unrecordedCodeKeyIds(owner: Principal): Promise<string[]> {
      // Not cached: a key registered a moment ago verifies its codes at once, on every replica,
      // whether or not the registration's broadcast has reached it yet.
      const rows = await db.query<{ id: string }>(
        `(SELECT id, created_at FROM verification_keys
          WHERE account_id = $1 AND environment = $2 AND type = 'public' AND status = 'active'
          ORDER BY created_at DESC LIMIT $3)
         UNION ALL
         (SELECT id, created_at FROM verification_keys
          WHERE account_id = $1 AND environment = $2 AND type = 'signing' AND status = 'active')
         ORDER BY created_at DESC`,
        [owner.accountId, owner.environment, maxActivePublicKeys],
      );
      return rows.map((row) => row.id);
    },

    forget(kid: string): void {
      byKid.delete(kid);
      published = undefined;
      builds.forget();
    },

    /** Drops the published key set, e.g. when who may sign for which GTINs changed. */
    republish(): void {
      published = undefined;
      builds.forget();
    },

    /**
     * Registers an external Ed25519 public key (base64url raw or PEM) for the owner, with or
     * without `proof`: the key's signature over its registration message for this account and
     * environment (packages/crypto/src/key-registration.ts). A proof, when given, is checked before
     * anything is looked up: without the private key, nobody learns whether a key is registered.
     * Already registered is `409 CONFLICT` in the same words whoever holds it: this owner (active),
     * or another account that proved it holds the key (holding one private key in two accounts is
     * a misuse). The owner may register one key in both environments, and register again a key it
     * revoked (the same row, active again). A row of another account without a proof (registered
     * without one, or before proofs existed: accounts migration 0009) or revoked keeps nobody from
     * registering the key: public keys are public, so a registration that proves nothing reserves
     * nothing (it verifies only codes of its own account's GTINs). With `by`, the API key
     * registering it: recorded as its creator (`GET /keys?createdBy=`), and the key is written only
     * while that key works (`401 REVOKED_API_KEY` or `EXPIRED_API_KEY` otherwise).
     */
    async register(
      owner: Principal,
      input: { name: string; publicKey: string; proof?: string | undefined },
      by?: { keyId: string; now: Date },
    ): Promise<VerificationKeyView> {
      const parsed = parseEd25519PublicKey(input.publicKey);
      if (!parsed.ok) {
        throw new HallmarkError('VALIDATION_ERROR', `Invalid request: publicKey: ${parsed.reason}.`, {
          fields: [{ field: 'publicKey', in: 'body', message: parsed.reason }],
        });
      }
      const publicKey = parsed.publicKey.toString('base64url');
      if (
        input.proof !== undefined &&
        !verifyKeyRegistrationProof({
          accountId: owner.accountId,
          environment: owner.environment,
          publicKey: parsed.publicKey,
          proof: input.proof,
        })
      ) {
        const reason = `not this key's Ed25519 signature (base64url, 86 characters) over the UTF-8 bytes of "hallmark-key-registration:${owner.accountId}:${owner.environment}:${publicKey}" (docs/SIGNING.md)`;
        throw new HallmarkError('VALIDATION_ERROR', `Invalid request: proof: ${reason}.`, {
          fields: [{ field: 'proof', in: 'body', message: reason }],
        });
      }
      const kid = ed25519Thumbprint(parsed.publicKey);
      const row = await db.transaction(async (tx) => {
        // Registered only while the registering key works (its revocation waits for this write).
        if (by) await lockActingKey(tx, by.keyId, by.now);
        // Registrations of one owner one at a time, so two at once cannot both take the last place;
        // then of one key one at a time, so two accounts at once cannot both take it (always in this order).
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `public-keys:${owner.accountId}:${owner.environment}`,
        ]);
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`public-key:${kid}`]);
        const rows = await findKeyRegistrations(tx, kid);
        const own = rows.find((row) => row.account_id === owner.accountId && row.environment === owner.environment);
        const heldElsewhere = rows.some(
          (row) =>
            row.type === 'signing' || (row.account_id !== owner.accountId && row.status !== 'revoked' && Boolean(row.proof)),
        );
        if (heldElsewhere || (own && own.status !== 'revoked')) throw alreadyRegistered();
        if ((await countActivePublicKeys(tx, owner)) >= maxActivePublicKeys) {
          throw new HallmarkError(
            'CONFLICT',
            `This account has ${maxActivePublicKeys} active public keys in this environment, the most it may have: revoke one no longer used.`,
            { limit: maxActivePublicKeys },
          );
        }
        const key = { kid, name: input.name, publicKey, proof: input.proof ?? null, createdBy: by?.keyId ?? null };
        return own ? reactivatePublicKey(tx, owner, key) : insertPublicKey(tx, owner, key);
      });
      if (!row) throw alreadyRegistered();
      this.forget(kid);
      return toVerificationKeyView(row);
    },

    /** Revokes the owner's registration of `kid`; another account's or environment's, of the same key, stays. */
    async revoke(owner: Principal, kid: string, at: Date): Promise<VerificationKeyView | undefined> {
      const row = await revokePublicKey(db, owner, kid, at);
      if (row) this.forget(kid);
      return row ? toVerificationKeyView(row) : undefined;
    },

    /**
     * Every key a code may have been signed with, as RFC 8037 JWKs. Cached for a minute; the requests
     * that find it gone share one build (each built it: after any claim anywhere, every download of
     * the public set read every key and claim again).
     */
    async jwks(): Promise<Jwks> {
      const keysEpoch = epochs.current('verification_keys');
      // Claims made and claims ended both change the lists of GTINs below.
      const claimsEpoch = epochs.current('gtin_claims') + epochs.current('gtin_claims_added');
      if (published && published.until > Date.now() && published.keysEpoch >= keysEpoch && published.claimsEpoch >= claimsEpoch) {
        return published.jwks;
      }
      return builds.run(
        `${keysEpoch}:${claimsEpoch}`,
        async () => {
          const [rows, claims] = await Promise.all([listPublishableKeys(db), listActiveGtinClaims(db)]);
          return publishedKeySet(rows, claims);
        },
        (jwks) => {
          published = { jwks, until: Date.now() + cacheMs, keysEpoch, claimsEpoch };
        },
      );
    },
  };
}
export type VerificationKeys = ReturnType<typeof createVerificationKeys>;
