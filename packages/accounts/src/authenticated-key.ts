import type { Environment, Scope, Tier } from '@hallmark/contracts';

/** The key a request was made with, once authenticated. Everything a request may do follows from it. */
export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  environment: Environment;
  scopes: readonly Scope[];
  isOperator: boolean;
  tier: Tier;
  expiresAt: Date | null;
}
