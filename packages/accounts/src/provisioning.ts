import type { AccountView, CreatedAccount, Environment, Tier } from '@hallmark/contracts';
import type { SqlDatabase } from '@hallmark/sql';
import { type Account, findOperatorAccount, insertAccount } from './account-store.ts';
import { hashApiKeySecret } from './api-key-secret.ts';
import { findApiKeyByHash } from './api-key-store.ts';
import { assertWellFormedSecret, issueKey } from './api-keys.ts';

export function accountView(account: Account): AccountView {
  return { id: account.id, name: account.name, tier: account.tier, createdAt: account.createdAt.toISOString() };
}

/** A new account and its first API key (scope `*`), in one transaction. */
export async function provisionAccount(
  db: SqlDatabase,
  input: { name: string; tier: Tier; environment: Environment; isOperator?: boolean; secret?: string },
  now: Date,
): Promise<CreatedAccount> {
  return db.transaction(async (tx) => {
    const account = await insertAccount(tx, { name: input.name, tier: input.tier, isOperator: input.isOperator ?? false });
    const apiKey = await issueKey(
      tx,
      account,
      { name: 'first key', scopes: ['*'], environment: input.environment, creator: null, now },
      input.secret,
    );
    return { account: accountView(account), apiKey };
  });
}

export type BootstrapOutcome =
  | { kind: 'existing'; accountId: string }
  /** The operator's secret was stored. */
  | { kind: 'added'; accountId: string }
  /** A secret was made; show it once, it cannot be read again. */
  | { kind: 'generated'; accountId: string; secret: string };

/**
 * Ensures an operator account (tier enterprise) owning `secret` with scope `*`. With no secret
 * given, creates one only when there is no operator yet, and answers the secret so it can be shown once.
 */
export async function ensureOperator(db: SqlDatabase, secret: string | undefined, now: Date): Promise<BootstrapOutcome> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('hallmark:bootstrap', 0))`);
    if (secret !== undefined) {
      const environment = assertWellFormedSecret(secret, 'HALLMARK_BOOTSTRAP_KEY');
      const existing = await findApiKeyByHash(tx, hashApiKeySecret(secret));
      if (existing) return { kind: 'existing', accountId: existing.accountId };
      const operator =
        (await findOperatorAccount(tx)) ?? (await insertAccount(tx, { name: 'operator', tier: 'enterprise', isOperator: true }));
      await issueKey(tx, operator, { name: 'bootstrap key', scopes: ['*'], environment, creator: null, now }, secret);
      return { kind: 'added', accountId: operator.id };
    }
    const operator = await findOperatorAccount(tx);
    if (operator) return { kind: 'existing', accountId: operator.id };
    const account = await insertAccount(tx, { name: 'operator', tier: 'enterprise', isOperator: true });
    const key = await issueKey(tx, account, { name: 'bootstrap key', scopes: ['*'], environment: 'live', creator: null, now });
    return { kind: 'generated', accountId: account.id, secret: key.secret };
  });
}
