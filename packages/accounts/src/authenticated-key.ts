import type { Environment, Scope, Tier } from '@hallmark/contracts';
import type { Restrictions } from './domain/key-restrictions.ts';

/** The key a request was made with, once authenticated. Everything a request may do follows from it. */
export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  environment: Environment;
  scopes: readonly Scope[];
  isOperator: boolean;
  tier: Tier;
  expiresAt: Date | null;
  /** The GTINs the key is restricted to (services/gateway/src/auth/key-restrictions.ts); null: not restricted. */
  restrictions: Restrictions | null;
}
