import {
  type ApiKeyView,
  type CreateApiKeyBody,
  type CreatedApiKey,
  type Environment,
  HallmarkError,
  type Scope,
} from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { findAccount } from './account-store.ts';
import { environmentOfSecret, hashApiKeySecret, newApiKeySecret, secretPrefix } from './api-key-secret.ts';
import { type ApiKeyRecord, insertApiKey } from './api-key-store.ts';
import type { AuthenticatedKey } from './authenticated-key.ts';
import { parseExpiresIn } from './expires-in.ts';
import { newId } from './ids.ts';
import { scopesBeyond } from './scope-rules.ts';

export function apiKeyStatus(key: Pick<ApiKeyRecord, 'expiresAt' | 'revokedAt'>, now: Date): ApiKeyView['status'] {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

export function apiKeyView(key: ApiKeyRecord, now: Date): ApiKeyView {
  return {
    id: key.id,
    type: 'api',
    name: key.name,
    environment: key.environment,
    scopes: [...key.scopes],
    prefix: key.prefix,
    status: apiKeyStatus(key, now),
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

/**
 * The environment a key may create or register keys in: its own by default; a live key may also
 * act in test, but a test key never in live (403 INSUFFICIENT_SCOPE).
 */
export function environmentFor(creator: AuthenticatedKey, requested: Environment | undefined, action: string): Environment {
  const environment = requested ?? creator.environment;
  if (creator.environment === 'test' && environment === 'live') {
    throw new HallmarkError('INSUFFICIENT_SCOPE', `A test key cannot ${action} live keys; use a live key.`, {
      required: 'environment:live',
      granted: 'environment:test',
    });
  }
  return environment;
}

/** Stores a key and answers it with its secret, the one time the secret is shown. */
export async function storeNewApiKey(
  sql: SqlExecutor,
  input: {
    accountId: string;
    environment: Environment;
    name: string;
    scopes: readonly Scope[];
    expiresAt: Date | null;
    createdBy: string | null;
    /** Given by the operator at bootstrap; otherwise a new one is made. */
    secret?: string;
  },
  now: Date,
): Promise<CreatedApiKey> {
  const secret = input.secret ?? newApiKeySecret(input.environment);
  const record = await insertApiKey(sql, {
    id: newId('key'),
    accountId: input.accountId,
    environment: input.environment,
    name: input.name,
    keyHash: hashApiKeySecret(secret),
    prefix: secretPrefix(secret),
    scopes: input.scopes,
    createdBy: input.createdBy,
    expiresAt: input.expiresAt,
  });
  return { ...apiKeyView(record, now), secret };
}

/**
 * POST /keys for an API key: the creator may grant only scopes it holds, only in its own
 * environment or (from a live key) the test one, and never beyond its own expiry.
 */
export async function createApiKey(
  sql: SqlExecutor,
  creator: AuthenticatedKey,
  body: CreateApiKeyBody,
  now: Date,
): Promise<CreatedApiKey> {
  const environment = environmentFor(creator, body.environment, 'create');
  const beyond = scopesBeyond(creator.scopes, creator.isOperator, body.scopes);
  if (beyond.length > 0) {
    throw new HallmarkError(
      'INSUFFICIENT_SCOPE',
      `A key can grant only scopes it holds itself; this one lacks ${beyond.join(', ')}.`,
      {
        required: beyond,
        granted: [...creator.scopes],
      },
    );
  }
  let expiresAt: Date | null = null;
  if (body.expiresIn !== undefined) {
    const parsed = parseExpiresIn(body.expiresIn);
    if (!parsed.ok) {
      throw new HallmarkError('VALIDATION_ERROR', `Invalid request: expiresIn ${parsed.message}.`, {
        fields: [{ field: 'expiresIn', in: 'body', message: parsed.message }],
      });
    }
    expiresAt = new Date(now.getTime() + parsed.milliseconds);
  }
  if (creator.expiresAt && (expiresAt === null || expiresAt > creator.expiresAt)) expiresAt = creator.expiresAt;
  return storeNewApiKey(
    sql,
    { accountId: creator.accountId, environment, name: body.name, scopes: body.scopes, expiresAt, createdBy: creator.keyId },
    now,
  );
}

/**
 * An API key made by the operator's tools (the CLI), with no creating key to inherit from:
 * any scopes but `accounts:write`, which only the operator's own account may hold.
 */
export async function issueApiKey(
  sql: SqlExecutor,
  input: { accountId: string; environment: Environment; name: string; scopes: readonly Scope[]; expiresIn?: string },
  now: Date,
): Promise<CreatedApiKey> {
  const account = await findAccount(sql, input.accountId);
  if (!account) throw new HallmarkError('NOT_FOUND', `There is no account ${input.accountId}.`);
  const beyond = scopesBeyond(['*'], account.isOperator, input.scopes);
  if (beyond.length > 0) {
    throw new HallmarkError('INSUFFICIENT_SCOPE', `Account ${account.id} cannot hold ${beyond.join(', ')}.`, {
      required: beyond,
      granted: ['*'],
    });
  }
  let expiresAt: Date | null = null;
  if (input.expiresIn !== undefined) {
    const parsed = parseExpiresIn(input.expiresIn);
    if (!parsed.ok) throw new HallmarkError('VALIDATION_ERROR', `expiresIn ${parsed.message}.`);
    expiresAt = new Date(now.getTime() + parsed.milliseconds);
  }
  return storeNewApiKey(
    sql,
    { accountId: account.id, environment: input.environment, name: input.name, scopes: input.scopes, expiresAt, createdBy: null },
    now,
  );
}

/** Checks an operator-supplied secret (bootstrap, CLI) and names what is wrong with it. */
export function assertWellFormedSecret(secret: string, variable: string): Environment {
  const environment = environmentOfSecret(secret);
  if (!environment) throw new Error(`${variable} must look like svc_live_<64 lower-case hex> (or svc_test_…).`);
  return environment;
}
