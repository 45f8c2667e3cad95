// Every change to an account and its API keys is an event in the account's stream, written with its
// rows in the event's transaction (the read models of the append): a key is stored with its audit
// record or not at all. Events hold a key's facts, never its secret, hash or prefix.
//
//   account.created  POST /accounts, the operator's account at bootstrap
//   key.issued       POST /keys, an account's first key, the bootstrap key, `hallmark keys create`
//   key.revoked      POST /keys/{id}/revoke, `hallmark keys revoke`
//   key.rotated      POST /keys/{id}/rotate (with the new key's key.issued, which names the key it `replaces`)

import type { CreateApiKeyBody, CreatedAccount, CreatedApiKey, Environment, Principal, Scope, Tier } from '@hallmark/contracts';
import { HallmarkError } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import type { SqlDatabase, SqlExecutor } from '@hallmark/sql';
import { type Account, findAccount, findOperatorAccount, insertAccount } from './account-store.ts';
import { hashApiKeySecret, newApiKeySecret } from './api-key-secret.ts';
import {
  ActingKeyExpiryMoved,
  type ApiKeyRecord,
  decideApiKeyRevocation,
  findApiKeyByHash,
  findApiKeyById,
  lockActingKey,
  lockActingKeyOutliving,
  writeKeyRevoked,
} from './api-key-store.ts';
import {
  assertWellFormedSecret,
  decideApiKeyCreation,
  decideOperatorKeyIssue,
  type KeyIssued,
  writeKeyIssued,
} from './api-keys.ts';
import type { AuthenticatedKey } from './authenticated-key.ts';
import type { Restrictions } from './domain/key-restrictions.ts';
import { decideKeyRotation, type RotationGraceSeconds } from './domain/key-rotation.ts';
import { newId } from './ids.ts';

export interface AccountLogDeps {
  db: SqlDatabase;
  eventStore: EventStore;
}

const keyIssuedInput = (event: KeyIssued) => ({ type: 'key.issued', data: { ...event.data } });

function accountCreatedInput(account: { id: string; name: string; tier: Tier; isOperator: boolean }, now: Date) {
  return {
    type: 'account.created',
    data: {
      accountId: account.id,
      name: account.name,
      tier: account.tier,
      isOperator: account.isOperator,
      createdAt: now.toISOString(),
    },
  };
}

export function accountView(account: Account): CreatedAccount['account'] {
  return { id: account.id, name: account.name, tier: account.tier, createdAt: account.createdAt.toISOString() };
}

/**
 * A new account and its first API key (scope `*`): `account.created` and `key.issued` in the new
 * account's stream (of the key's environment), with both rows in the append's transaction.
 */
export async function provisionAccount(
  deps: AccountLogDeps,
  input: { name: string; tier: Tier; environment: Environment },
  now: Date,
): Promise<CreatedAccount> {
  const account = { id: newId('acc'), name: input.name, tier: input.tier, isOperator: false };
  const event = decideOperatorKeyIssue(account, { name: 'first key', scopes: ['*'], environment: input.environment }, now);
  let created: CreatedAccount | undefined;
  await deps.eventStore.append(
    accountStream({ accountId: account.id, environment: input.environment }),
    [accountCreatedInput(account, now), keyIssuedInput(event)],
    {
      expectedVersion: 0,
      readModels: {
        db: deps.db,
        async write(sql) {
          const stored = await insertAccount(sql, account, now);
          const apiKey = await writeKeyIssued(sql, event, newApiKeySecret(input.environment), now);
          created = { account: accountView(stored), apiKey };
        },
      },
    },
  );
  if (!created) throw new Error('The account.created append wrote no rows.');
  return created;
}

export type BootstrapOutcome =
  | { kind: 'existing'; accountId: string }
  /** The operator's secret was stored. */
  | { kind: 'added'; accountId: string }
  /** A secret was made; show it once, it cannot be read again. */
  | { kind: 'generated'; accountId: string; secret: string };

/** What another replica's bootstrap changed between our look and our write: look again. */
class BootstrapMoved extends Error {}

/**
 * Ensures an operator account (tier enterprise) owning `secret` with scope `*`. With no secret
 * given, creates one only when there is no operator yet (`newSecret`, when the caller kept it
 * somewhere first; else a new one), and answers the secret so it can be shown once. Replicas starting together serialise on an advisory lock inside the append's transaction,
 * look again under it, and start over when another got there first.
 */
export async function ensureOperator(
  deps: AccountLogDeps,
  secret: string | undefined,
  now: Date,
  newSecret?: string,
): Promise<BootstrapOutcome> {
  const environment = secret === undefined ? 'live' : assertWellFormedSecret(secret, 'HALLMARK_BOOTSTRAP_KEY');
  for (let attempt = 1; ; attempt += 1) {
    const existingKey = secret === undefined ? undefined : await findApiKeyByHash(deps.db, hashApiKeySecret(secret));
    if (existingKey) return { kind: 'existing', accountId: existingKey.accountId };
    const existingOperator = await findOperatorAccount(deps.db);
    if (existingOperator && secret === undefined) return { kind: 'existing', accountId: existingOperator.id };

    const operator = existingOperator ?? { id: newId('acc'), name: 'operator', tier: 'enterprise' as const, isOperator: true };
    const keySecret = secret ?? newSecret ?? newApiKeySecret('live');
    const event = decideOperatorKeyIssue(operator, { name: 'bootstrap key', scopes: ['*'], environment }, now);
    const stillAsSeen = async (sql: SqlExecutor) => {
      await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('hallmark:bootstrap', 0))`);
      if (secret !== undefined && (await findApiKeyByHash(sql, hashApiKeySecret(secret)))) return false;
      return (await findOperatorAccount(sql))?.id === existingOperator?.id;
    };
    try {
      await deps.eventStore.append(
        accountStream({ accountId: operator.id, environment }),
        [...(existingOperator ? [] : [accountCreatedInput(operator, now)]), keyIssuedInput(event)],
        {
          expectedVersion: existingOperator ? 'any' : 0,
          readModels: {
            db: deps.db,
            async write(sql) {
              if (!(await stillAsSeen(sql))) throw new BootstrapMoved();
              if (!existingOperator) await insertAccount(sql, operator, now);
              await writeKeyIssued(sql, event, keySecret, now);
            },
          },
        },
      );
    } catch (error) {
      if (!(error instanceof BootstrapMoved) || attempt >= 5) throw error;
      continue;
    }
    if (secret !== undefined) return { kind: 'added', accountId: operator.id };
    return { kind: 'generated', accountId: operator.id, secret: keySecret };
  }
}

/**
 * POST /keys for an API key: decides, then appends `key.issued` to the account's stream (of the new
 * key's environment) with the key's row written in the event's transaction.
 */
export async function recordApiKeyCreation(
  deps: AccountLogDeps,
  creator: AuthenticatedKey,
  body: CreateApiKeyBody,
  now: Date,
): Promise<CreatedApiKey> {
  return withActingKeyExpiry(creator, (acting) => appendKeyIssued(deps, decideApiKeyCreation(acting, body, now), now));
}

/**
 * Runs a write decided with the acting key's expiry; when the write finds the key expiring sooner
 * (ActingKeyExpiryMoved), decides and writes again with that expiry (twice at most: an expiry only
 * ever moves earlier, once per rotation).
 */
async function withActingKeyExpiry<T>(acting: AuthenticatedKey, write: (acting: AuthenticatedKey) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await write(acting);
    } catch (error) {
      if (!(error instanceof ActingKeyExpiryMoved) || attempt >= 2) throw error;
      acting = { ...acting, expiresAt: error.expiresAt };
    }
  }
}

/**
 * An API key made by the operator's tools (`hallmark keys create`), with no creating key to inherit
 * from: any scopes but `accounts:write`, which only the operator's own account may hold.
 */
export async function recordOperatorKeyIssue(
  deps: AccountLogDeps,
  input: {
    accountId: string;
    environment: Environment;
    name: string;
    scopes: readonly Scope[];
    expiresIn?: string;
    restrictions?: { gtins: readonly string[] };
  },
  now: Date,
): Promise<CreatedApiKey> {
  const account = await findAccount(deps.db, input.accountId);
  if (!account) throw new HallmarkError('NOT_FOUND', `There is no account ${input.accountId}.`);
  const { accountId: _, ...key } = input;
  return appendKeyIssued(deps, decideOperatorKeyIssue(account, key, now), now);
}

async function appendKeyIssued(deps: AccountLogDeps, event: KeyIssued, now: Date): Promise<CreatedApiKey> {
  const secret = newApiKeySecret(event.data.environment);
  let created: CreatedApiKey | undefined;
  await deps.eventStore.append(
    accountStream({ accountId: event.data.accountId, environment: event.data.environment }),
    [keyIssuedInput(event)],
    {
      expectedVersion: 'any',
      readModels: {
        db: deps.db,
        async write(sql) {
          // A key made by a key is written only while that key works (its revocation waits for this
          // write), and never outlives it as it is now.
          if (event.data.createdBy !== null) await lockActingKeyOutliving(sql, event.data.createdBy, event.data.expiresAt, now);
          created = await writeKeyIssued(sql, event, secret, now);
        },
      },
    },
  );
  if (!created) throw new Error('The key.issued append wrote no key row.');
  return created;
}

/** A racing revocation came first: its revokedAt stands, and this event must not be recorded. */
class RevokedMeanwhile extends Error {}

/**
 * Revokes an API key of this account and environment: undefined when there is none; a key revoked
 * already answers its first revokedAt and records nothing again; otherwise `key.revoked` is
 * appended with the row's update in its transaction. With `by` (the API key asking) only a key
 * within the asker's scopes (INSUFFICIENT_SCOPE); without (the operator's CLI) any key of the account.
 */
export async function recordApiKeyRevocation(
  deps: AccountLogDeps,
  owner: Principal,
  id: string,
  now: Date,
  by?: { keyId: string; scopes: readonly Scope[]; isOperator: boolean; restrictions: Restrictions | null },
): Promise<ApiKeyRecord | undefined> {
  const decided = await decideApiKeyRevocation(deps.db, owner, id, now, by);
  if (!decided) return undefined;
  const { event } = decided;
  if (!event) return decided.key;
  let revoked: ApiKeyRecord | undefined;
  try {
    await deps.eventStore.append(accountStream(owner), [{ type: 'key.revoked', data: { ...event.data } }], {
      expectedVersion: 'any',
      readModels: {
        db: deps.db,
        async write(sql) {
          if (by) await lockActingKey(sql, by.keyId, now);
          revoked = await writeKeyRevoked(sql, owner, event);
          if (revoked?.revokedAt?.toISOString() !== event.data.revokedAt) throw new RevokedMeanwhile();
        },
      },
    });
  } catch (error) {
    if (!(error instanceof RevokedMeanwhile)) throw error;
  }
  return revoked;
}

/** The key changed between the decision and the write (revoked, rotated, or its expiry changed). */
class ChangedMeanwhile extends Error {}

/**
 * POST /keys/{id}/rotate: decides (domain/key-rotation.ts), then appends `key.issued` (the new key,
 * with `replaces`) and `key.rotated` (the old key's new expiry) to the account's stream, with the new
 * key's row and the old key's expiry written in the append's transaction. The old key's update is
 * guarded by the expiry the decision read, so of two rotations racing over one key, one wins and
 * the other is CONFLICT. The changed expiry moves the `api_keys` cache epoch: every gateway sees it
 * within a second (the caller also drops it from its own cache and broadcasts).
 */
export async function recordApiKeyRotation(
  deps: AccountLogDeps,
  owner: Principal,
  id: string,
  graceSeconds: RotationGraceSeconds,
  now: Date,
  by: AuthenticatedKey,
): Promise<{ created: CreatedApiKey; replaced: { id: string; expiresAt: string } }> {
  return withActingKeyExpiry(by, (acting) => appendKeyRotation(deps, owner, id, graceSeconds, now, acting));
}

async function appendKeyRotation(
  deps: AccountLogDeps,
  owner: Principal,
  id: string,
  graceSeconds: RotationGraceSeconds,
  now: Date,
  by: AuthenticatedKey,
): Promise<{ created: CreatedApiKey; replaced: { id: string; expiresAt: string } }> {
  const target = await findApiKeyById(deps.db, id);
  const decision = decideKeyRotation(target && target.accountId === owner.accountId ? target : undefined, {
    type: 'RotateKey',
    newKeyId: newId('key'),
    graceSeconds,
    by: {
      keyId: by.keyId,
      environment: owner.environment,
      scopes: by.scopes,
      expiresAt: by.expiresAt,
      restrictions: by.restrictions,
    },
    accountIsOperator: by.isOperator,
    now,
  });
  if (!Array.isArray(decision)) throw new HallmarkError(decision.code, decision.message, decision.details);
  const [issued, rotated] = decision;
  const secret = newApiKeySecret(issued.data.environment);
  let created: CreatedApiKey | undefined;
  try {
    await deps.eventStore.append(
      accountStream(owner),
      [
        { type: 'key.issued', data: { ...issued.data } },
        { type: 'key.rotated', data: { ...rotated.data } },
      ],
      {
        expectedVersion: 'any',
        readModels: {
          db: deps.db,
          async write(sql) {
            // Before the old key's expiry changes: a key rotating itself away is still working here.
            // The new key never outlives the acting key as it is now.
            await lockActingKeyOutliving(sql, by.keyId, issued.data.expiresAt, now);
            const shortened = await sql.query(
              `UPDATE api_keys SET expires_at = $2, replaced_by = $4
               WHERE id = $1 AND revoked_at IS NULL AND replaced_by IS NULL AND expires_at IS NOT DISTINCT FROM $3 RETURNING id`,
              [id, new Date(rotated.data.expiresAt), target?.expiresAt ?? null, rotated.data.replacedBy],
            );
            if (shortened.length !== 1) throw new ChangedMeanwhile();
            created = await writeKeyIssued(sql, issued, secret, now);
          },
        },
      },
    );
  } catch (error) {
    if (error instanceof ChangedMeanwhile) {
      throw new HallmarkError('CONFLICT', 'The key was revoked or rotated meanwhile; list the keys and try again.', { id });
    }
    throw error;
  }
  if (!created) throw new Error('The key.rotated append wrote no key row.');
  return { created, replaced: { id, expiresAt: rotated.data.expiresAt } };
}
