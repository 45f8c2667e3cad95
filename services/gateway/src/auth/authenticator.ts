import {
  type ApiKeyWithAccount,
  type AuthenticatedKey,
  type CacheEpochs,
  findApiKeyByHash,
  findApiKeyById,
  fixedCacheEpochs,
  hashApiKeySecret,
  isWellFormedSecret,
  refuseUnusableKey,
} from '@hallmark/accounts';
import { HallmarkError } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

export interface Authenticator {
  /**
   * The spec's order: read the header, check its form, hash, look up, then refuse a revoked or
   * expired key. Fails with MISSING_API_KEY, INVALID_API_KEY, REVOKED_API_KEY or EXPIRED_API_KEY.
   * A cached key is answered at once, without a promise.
   */
  authenticate(header: string | string[] | undefined): AuthenticatedKey | Promise<AuthenticatedKey>;
  /**
   * The same checks answered from the cache only: the key, or a failure as `authenticate` gives
   * it, when the key (or its absence from the database) is cached; undefined when only a look-up
   * can tell. Sends no statement.
   */
  authenticateCached(header: string | string[] | undefined): AuthenticatedKey | undefined;
  /**
   * The same checks for a key known by its id (a console session holds the id, never the secret):
   * INVALID_API_KEY when it no longer exists, REVOKED_API_KEY, EXPIRED_API_KEY. Cached like keys by
   * hash, and dropped alike by `forget` and the `api_keys` cache epoch, so a key revoked anywhere
   * (by the API, the CLI or plain SQL) ends its sessions within a second.
   */
  authenticateKeyId(keyId: string): AuthenticatedKey | Promise<AuthenticatedKey>;
  /** Drops a key from the cache; called on every replica when a key is revoked anywhere. */
  forget(keyId: string): void;
}

interface CacheEntry {
  /** The stored key, for the revocation and expiry checks. */
  record: ApiKeyWithAccount | undefined;
  /** What requests receive: built once per cache fill, frozen, shared by every request. */
  authenticated: AuthenticatedKey | undefined;
  until: number;
  /** The `api_keys` epoch when the look-up began: an entry older than the current epoch is gone. */
  epoch: number;
}

/** Keys found, and unknown hashes, each kept up to this many: a flood of unknown keys never pushes a found key out. */
const defaultMaxEntries = 50_000;

function toAuthenticatedKey(key: ApiKeyWithAccount): AuthenticatedKey {
  return Object.freeze({
    keyId: key.id,
    accountId: key.accountId,
    environment: key.environment,
    scopes: Object.freeze([...key.scopes]),
    isOperator: key.isOperator,
    tier: key.tier,
    expiresAt: key.expiresAt,
    restrictions: key.restrictions && Object.freeze({ gtins: Object.freeze([...key.restrictions.gtins]) }),
  });
}

/**
 * Keys are cached by hash so most requests cost a SHA-256 and a map lookup. A revocation reaches
 * every replica by broadcast (`forget`) at once, and by the `api_keys` cache epoch (polled, checked
 * on every use) within a second if the broadcast was lost. Unknown hashes are remembered briefly,
 * so guessing does not become a database load.
 */
export function createAuthenticator(options: {
  db: SqlExecutor;
  clock: () => Date;
  cacheMs?: number;
  epochs?: CacheEpochs;
  maxEntries?: number;
}): Authenticator {
  const cacheMs = options.cacheMs ?? 30_000;
  const maxEntries = options.maxEntries ?? defaultMaxEntries;
  const epochs = options.epochs ?? fixedCacheEpochs;
  const byHash = new Map<string, CacheEntry>();
  // Hashes no key has, remembered for 5 s, apart from the keys found.
  const unknownHashes = new Map<string, CacheEntry>();
  const hashById = new Map<string, string>();
  // One look-up per hash at a time: when a busy key's entry expires, the requests that arrive
  // during its refill wait for that one query instead of each starting its own (a stampede that
  // stalled the event loop for tens of milliseconds at 10,000 requests/s in the embedded form).
  const filling = new Map<string, Promise<CacheEntry>>();
  // Keys by id, for console sessions: few (one per signed-in key), with the same rules.
  const byId = new Map<string, CacheEntry>();
  const fillingById = new Map<string, Promise<CacheEntry>>();

  // Bumped by every `forget`: a look-up that began before a revocation may have read the key as it
  // was, so its answer serves the requests that waited for it but is not kept.
  let forgets = 0;

  const fill = async (hash: string): Promise<CacheEntry> => {
    const forgetsAtStart = forgets;
    const epoch = epochs.current('api_keys');
    const record = await findApiKeyByHash(options.db, hash);
    const entries = record ? byHash : unknownHashes;
    if (entries.size >= maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) {
        // Its key's id goes with it: else every key ever seen stayed in hashById (a tenant creating
        // and revoking keys without end grew it without bound).
        const evictedId = entries.get(oldest)?.record?.id;
        if (evictedId !== undefined && hashById.get(evictedId) === oldest) hashById.delete(evictedId);
        entries.delete(oldest);
      }
    }
    const entry: CacheEntry = {
      record,
      authenticated: record && toAuthenticatedKey(record),
      until: Date.now() + (record ? cacheMs : 5_000),
      epoch,
    };
    if (forgets !== forgetsAtStart) return entry;
    entries.set(hash, entry);
    if (record) {
      hashById.set(record.id, hash);
      unknownHashes.delete(hash);
    }
    return entry;
  };

  const fillById = async (keyId: string): Promise<CacheEntry> => {
    const forgetsAtStart = forgets;
    const epoch = epochs.current('api_keys');
    const record = await findApiKeyById(options.db, keyId);
    if (byId.size >= maxEntries) {
      const oldest = byId.keys().next().value;
      if (oldest !== undefined) byId.delete(oldest);
    }
    const entry: CacheEntry = {
      record,
      authenticated: record && toAuthenticatedKey(record),
      until: Date.now() + (record ? cacheMs : 5_000),
      epoch,
    };
    if (forgets === forgetsAtStart) byId.set(keyId, entry);
    return entry;
  };

  const check = (entry: CacheEntry): AuthenticatedKey => {
    const { record, authenticated } = entry;
    if (!record || !authenticated) throw new HallmarkError('INVALID_API_KEY', 'The API key does not exist.');
    refuseUnusableKey(record, options.clock());
    return authenticated;
  };

  const fresh = (entry: CacheEntry | undefined) =>
    entry && entry.until > Date.now() && entry.epoch >= epochs.current('api_keys') ? entry : undefined;
  const cachedEntry = (hash: string) => fresh(byHash.get(hash)) ?? fresh(unknownHashes.get(hash));

  /** The hash of a well-formed key; MISSING_API_KEY or INVALID_API_KEY otherwise. */
  const hashOf = (header: string | string[] | undefined): string => {
    if (header === undefined || header === '') {
      throw new HallmarkError('MISSING_API_KEY', 'Send your API key in the x-api-key header.');
    }
    if (typeof header !== 'string' || !isWellFormedSecret(header)) {
      throw new HallmarkError(
        'INVALID_API_KEY',
        'The API key is malformed: it must look like svc_live_<64 hex> or svc_test_<64 hex>.',
      );
    }
    return hashApiKeySecret(header);
  };

  return {
    authenticateCached(header) {
      const cached = cachedEntry(hashOf(header));
      return cached ? check(cached) : undefined;
    },
    authenticate(header) {
      const hash = hashOf(header);
      const cached = cachedEntry(hash);
      if (cached) return check(cached);
      let pending = filling.get(hash);
      if (!pending) {
        pending = fill(hash).finally(() => filling.delete(hash));
        filling.set(hash, pending);
      }
      return pending.then(check);
    },
    authenticateKeyId(keyId) {
      // A key just authenticated by its secret (a request's second check, once its body is read)
      // is found through its hash, without a look-up of its own.
      const hash = hashById.get(keyId);
      const cached = fresh(byId.get(keyId)) ?? (hash === undefined ? undefined : fresh(byHash.get(hash)));
      if (cached) return check(cached);
      let pending = fillingById.get(keyId);
      if (!pending) {
        pending = fillById(keyId).finally(() => fillingById.delete(keyId));
        fillingById.set(keyId, pending);
      }
      return pending.then(check);
    },
    forget(keyId) {
      forgets += 1;
      byId.delete(keyId);
      const hash = hashById.get(keyId);
      if (hash) byHash.delete(hash);
      hashById.delete(keyId);
    },
  };
}

/**
 * The refusal of a key another replica stopped a moment ago (a stop marker, rate-limiter.ts), as
 * the database tells it now: the key is forgotten and read again, so a revoked key answers
 * REVOKED_API_KEY and an expired one EXPIRED_API_KEY with its `expiredAt`, as every later request
 * with it will. Without the database, the stop's code alone.
 */
export async function refusalOfStoppedKey(
  authenticator: Authenticator,
  keyId: string,
  stop: 'REVOKED_API_KEY' | 'EXPIRED_API_KEY',
): Promise<HallmarkError> {
  authenticator.forget(keyId);
  try {
    await authenticator.authenticateKeyId(keyId);
  } catch (error) {
    if (error instanceof HallmarkError) return error;
  }
  return new HallmarkError(stop, 'The API key no longer works; create a new one.');
}
