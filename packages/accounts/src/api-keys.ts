import {
  type ApiKeyView,
  type CreateApiKeyBody,
  type CreatedApiKey,
  type Environment,
  HallmarkError,
  type Scope,
} from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { environmentOfSecret, hashApiKeySecret, secretPrefix } from './api-key-secret.ts';
import { type ApiKeyRecord, countActiveApiKeys, insertApiKey } from './api-key-store.ts';
import type { AuthenticatedKey } from './authenticated-key.ts';
import {
  type ApiKeyEvent,
  type DomainError,
  decide,
  decideEnvironment,
  initialAccountKeys,
  isDomainError,
} from './domain/api-keys.ts';
import type { Restrictions } from './domain/key-restrictions.ts';
import { newId } from './ids.ts';

export type KeyIssued = Extract<ApiKeyEvent, { type: 'KeyIssued' }>;

export function apiKeyStatus(key: Pick<ApiKeyRecord, 'expiresAt' | 'revokedAt'>, now: Date): ApiKeyView['status'] {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/** A key's restrictions as the API shows them (a copy: the key's stay frozen in the key caches); null when none. */
export const restrictionsViewOf = (restrictions: Restrictions | null): { gtins: string[] } | null =>
  restrictions && { gtins: [...restrictions.gtins] };

/** A key as the API shows it; `lastUsedAt` from api_key_last_used (null: never used, or not written yet). */
export function apiKeyView(key: ApiKeyRecord, now: Date, lastUsedAt: Date | null = null): ApiKeyView {
  return {
    id: key.id,
    type: 'api',
    name: key.name,
    environment: key.environment,
    scopes: [...key.scopes],
    prefix: key.prefix,
    status: apiKeyStatus(key, now),
    createdBy: key.createdBy,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: lastUsedAt?.toISOString() ?? null,
    restrictions: restrictionsViewOf(key.restrictions),
  };
}

/** Throws a decider's refusal as the HTTP error of the same code. */
export function throwRefusal(refusal: DomainError): never {
  throw new HallmarkError(refusal.code, refusal.message, refusal.details);
}

/**
 * The environment a key may create or register keys in: its own by default; a live key may also
 * act in test, but a test key never in live (403 INSUFFICIENT_SCOPE).
 */
export function environmentFor(creator: AuthenticatedKey, requested: Environment | undefined, action: string): Environment {
  const decided = decideEnvironment(creator.environment, requested, action);
  return typeof decided === 'string' ? decided : throwRefusal(decided);
}

/**
 * API keys an account may have active in one environment. Every key in use sits in each gateway's
 * key cache, shared by all accounts; without a cap one account could churn the others' keys out of
 * it. A rotation needs a place too (the old key stays active through its grace period).
 */
export const maxActiveApiKeys = 100;

/**
 * Writes the row a KeyIssued event describes, with the secret's hash, and answers the secret, the
 * one time it is shown; in the event's transaction. `409 CONFLICT` when the account has
 * maxActiveApiKeys active in the environment already. Issues of one owner are taken one at a time
 * (a transaction lock), so two at once cannot both take the last place.
 */
export async function writeKeyIssued(sql: SqlExecutor, event: KeyIssued, secret: string, now: Date): Promise<CreatedApiKey> {
  const { data } = event;
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`api-keys:${data.accountId}:${data.environment}`]);
  if ((await countActiveApiKeys(sql, data, now)) >= maxActiveApiKeys) {
    throw new HallmarkError(
      'CONFLICT',
      `This account has ${maxActiveApiKeys} active API keys in this environment, the most it may have: revoke one no longer used.`,
      { limit: maxActiveApiKeys },
    );
  }
  const record = await insertApiKey(sql, {
    id: data.keyId,
    accountId: data.accountId,
    environment: data.environment,
    name: data.name,
    keyHash: hashApiKeySecret(secret),
    prefix: secretPrefix(secret),
    scopes: data.scopes,
    createdBy: data.createdBy,
    createdAt: new Date(data.createdAt),
    expiresAt: data.expiresAt === null ? null : new Date(data.expiresAt),
    restrictions: data.restrictions ?? null,
  });
  return { ...apiKeyView(record, now), secret };
}

/**
 * Decides an API key made by the operator's tools (provisioning, bootstrap, the CLI), with no
 * creating key: any scopes but `accounts:write`, which only the operator's own account may hold.
 * Throws the decider's refusal (INSUFFICIENT_SCOPE, VALIDATION_ERROR) as a HallmarkError.
 */
export function decideOperatorKeyIssue(
  account: { id: string; isOperator: boolean },
  input: {
    name: string;
    scopes: readonly Scope[];
    environment: Environment;
    expiresIn?: string;
    restrictions?: { gtins: readonly string[] };
  },
  now: Date,
): KeyIssued {
  const decision = decide(
    {
      type: 'IssueKey',
      keyId: newId('key'),
      name: input.name,
      scopes: input.scopes,
      environment: input.environment,
      ...(input.expiresIn !== undefined ? { expiresIn: input.expiresIn } : {}),
      ...(input.restrictions !== undefined ? { restrictions: input.restrictions } : {}),
      creator: null,
      now,
    },
    initialAccountKeys(account.id, account.isOperator),
  );
  if (isDomainError(decision)) throwRefusal(decision);
  const [event] = decision;
  if (event?.type !== 'KeyIssued') throw new Error('IssueKey decided no KeyIssued event.');
  return event;
}

/** The IssueKey command of POST /keys: the creator's facts, the body and the time. */
function issueCommandOf(creator: AuthenticatedKey, body: CreateApiKeyBody, now: Date) {
  return {
    name: body.name,
    scopes: body.scopes,
    ...(body.environment ? { environment: body.environment } : {}),
    ...(body.expiresIn !== undefined ? { expiresIn: body.expiresIn } : {}),
    ...(body.restrictions !== undefined ? { restrictions: body.restrictions } : {}),
    creator: {
      keyId: creator.keyId,
      environment: creator.environment,
      scopes: creator.scopes,
      expiresAt: creator.expiresAt,
      restrictions: creator.restrictions,
    },
    now,
  };
}

/**
 * Decides POST /keys for an API key without writing: the KeyIssued event (the shell writes its row
 * with writeKeyIssued), or the refusal thrown as a HallmarkError.
 */
export function decideApiKeyCreation(creator: AuthenticatedKey, body: CreateApiKeyBody, now: Date): KeyIssued {
  const decision = decide(
    { type: 'IssueKey', keyId: newId('key'), ...issueCommandOf(creator, body, now) },
    initialAccountKeys(creator.accountId, creator.isOperator),
  );
  if (isDomainError(decision)) throwRefusal(decision);
  const [event] = decision;
  if (event?.type !== 'KeyIssued') throw new Error('IssueKey decided no KeyIssued event.');
  return event;
}

/** Checks an operator-supplied secret (bootstrap, CLI) and names what is wrong with it. */
export function assertWellFormedSecret(secret: string, variable: string): Environment {
  const environment = environmentOfSecret(secret);
  if (!environment) throw new Error(`${variable} must look like svc_live_<64 lower-case hex> (or svc_test_…).`);
  return environment;
}
