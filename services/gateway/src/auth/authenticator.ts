import {
  type ApiKeyWithAccount,
  type AuthenticatedKey,
  environmentOfSecret,
  findApiKeyByHash,
  hashApiKeySecret,
} from '@hallmark/accounts';
import { HallmarkError } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

export interface Authenticator {
  /**
   * The spec's order: read the header, check its form, hash, look up, then refuse a revoked or
   * expired key. Fails with MISSING_API_KEY, INVALID_API_KEY, REVOKED_API_KEY or EXPIRED_API_KEY.
   */
  authenticate(header: string | string[] | undefined): Promise<AuthenticatedKey>;
  /** Drops a key from the cache; called on every replica when a key is revoked anywhere. */
  forget(keyId: string): void;
}

interface CacheEntry {
  key: ApiKeyWithAccount | undefined;
  until: number;
}

const maxEntries = 50_000;

/**
 * Keys are cached by hash so most requests cost a SHA-256 and a map lookup. A revocation reaches
 * every replica by broadcast (`forget`); the TTL bounds the damage if a broadcast is ever lost.
 * Unknown hashes are remembered briefly, so guessing does not become a database load.
 */
export function createAuthenticator(options: { db: SqlExecutor; clock: () => Date; cacheMs?: number }): Authenticator {
  const cacheMs = options.cacheMs ?? 30_000;
  const byHash = new Map<string, CacheEntry>();
  const hashById = new Map<string, string>();

  const lookUp = async (hash: string): Promise<ApiKeyWithAccount | undefined> => {
    const cached = byHash.get(hash);
    if (cached && cached.until > Date.now()) return cached.key;
    const key = await findApiKeyByHash(options.db, hash);
    if (byHash.size >= maxEntries) {
      const oldest = byHash.keys().next().value;
      if (oldest !== undefined) byHash.delete(oldest);
    }
    byHash.set(hash, { key, until: Date.now() + (key ? cacheMs : 5_000) });
    if (key) hashById.set(key.id, hash);
    return key;
  };

  return {
    async authenticate(header) {
      if (header === undefined || header === '') {
        throw new HallmarkError('MISSING_API_KEY', 'Send your API key in the x-api-key header.');
      }
      if (typeof header !== 'string' || !environmentOfSecret(header)) {
        throw new HallmarkError(
          'INVALID_API_KEY',
          'The API key is malformed: it must look like svc_live_<64 hex> or svc_test_<64 hex>.',
        );
      }
      const key = await lookUp(hashApiKeySecret(header));
      if (!key) throw new HallmarkError('INVALID_API_KEY', 'The API key does not exist.');
      if (key.revokedAt) throw new HallmarkError('REVOKED_API_KEY', 'The API key was revoked; create a new one.');
      if (key.expiresAt && key.expiresAt.getTime() <= options.clock().getTime()) {
        throw new HallmarkError('EXPIRED_API_KEY', 'The API key has expired; create a new one.', {
          expiredAt: key.expiresAt.toISOString(),
        });
      }
      return {
        keyId: key.id,
        accountId: key.accountId,
        environment: key.environment,
        scopes: key.scopes,
        isOperator: key.isOperator,
        tier: key.tier,
        expiresAt: key.expiresAt,
      };
    },
    forget(keyId) {
      const hash = hashById.get(keyId);
      if (hash) byHash.delete(hash);
      hashById.delete(keyId);
    },
  };
}
