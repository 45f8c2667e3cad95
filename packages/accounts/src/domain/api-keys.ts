// An account's API keys, as a decider: no I/O, no clock (time comes in the command), no secrets.
// The shell makes the secret and its hash, decides, writes the row the event describes, and
// answers; the secret, its hash and its prefix never enter an event.

import {
  type DomainError as ContractsDomainError,
  type Environment,
  isDomainError as isRefusedDecision,
  refuse,
  type Scope,
} from '@hallmark/contracts';
import { parseExpiresIn } from '../expires-in.ts';
import { holdsScope, scopesBeyond } from '../scope-rules.ts';
import { type Restrictions, refusalBeyondRestrictions, restrictionsOf } from './key-restrictions.ts';

export type ApiKeyEvent =
  | {
      type: 'KeyIssued';
      data: {
        keyId: string;
        accountId: string;
        environment: Environment;
        name: string;
        scopes: Scope[];
        /** The key that made it; null for the operator's tools (bootstrap, provisioning, CLI). */
        createdBy: string | null;
        createdAt: string;
        expiresAt: string | null;
        /** The GTINs the key is restricted to; absent: not restricted (every key before 2026-12-07). */
        restrictions?: { gtins: string[] };
      };
    }
  | { type: 'KeyRevoked'; data: { keyId: string; revokedAt: string; revokedBy: string | null } };

/** What the decisions read of one key. */
export interface KeyFacts {
  id: string;
  environment: Environment;
  scopes: readonly Scope[];
  expiresAt: string | null;
  revokedAt: string | null;
  restrictions: Restrictions | null;
}

/** The account's keys as the decisions need them (the shell may load only the keys a command names). */
export interface AccountKeys {
  accountId: string;
  /** The operator's account: the only one whose keys may hold `accounts:write`. */
  isOperator: boolean;
  keys: ReadonlyMap<string, KeyFacts>;
}

/** The key asking, as authentication found it; null for the operator's tools, which act for the account. */
export interface CreatorFacts {
  keyId: string;
  environment: Environment;
  scopes: readonly Scope[];
  expiresAt: Date | null;
  /** The GTINs the asking key is restricted to; null: not restricted. */
  restrictions: Restrictions | null;
}

export type ApiKeyCommand =
  | {
      type: 'IssueKey';
      /** The new key's id, made by the shell. */
      keyId: string;
      name: string;
      scopes: readonly Scope[];
      /** Default: the creator's environment (required without a creator). */
      environment?: Environment;
      expiresIn?: string;
      /** The GTINs the new key is restricted to, as sent (normalised by the decision). */
      restrictions?: { gtins: readonly string[] };
      creator: CreatorFacts | null;
      now: Date;
    }
  | {
      type: 'RevokeKey';
      keyId: string;
      /** Only keys of this environment are found (the asker's). */
      environment: Environment;
      by: Pick<CreatorFacts, 'keyId' | 'scopes' | 'restrictions'> | null;
      now: Date;
    };

/** A refusal, as a value; the shell answers it with the same code. */
export type DomainError = ContractsDomainError<'INSUFFICIENT_SCOPE' | 'KEY_RESTRICTED' | 'NOT_FOUND' | 'VALIDATION_ERROR'>;

export const isDomainError = (decision: readonly ApiKeyEvent[] | DomainError): decision is DomainError =>
  isRefusedDecision(decision);

export const initialAccountKeys = (accountId: string, isOperator: boolean): AccountKeys => ({
  accountId,
  isOperator,
  keys: new Map(),
});

/**
 * The environment a key may create or register keys in: its own by default; a live key may also
 * act in test, but a test key never in live (INSUFFICIENT_SCOPE, required `environment:live`).
 */
export function decideEnvironment(
  creatorEnvironment: Environment,
  requested: Environment | undefined,
  action: string,
): Environment | DomainError {
  const environment = requested ?? creatorEnvironment;
  if (creatorEnvironment === 'test' && environment === 'live') {
    return refuse('INSUFFICIENT_SCOPE', `A test key cannot ${action} live keys; use a live key.`, {
      required: 'environment:live',
      granted: 'environment:test',
    });
  }
  return environment;
}

/**
 * Rotating the signing key: it signs for the whole account, so it counts as a key holding `*` and
 * only a key holding `*` may replace it. Undefined when allowed.
 */
export function decideSigningKeyRotation(by: { scopes: readonly Scope[]; isOperator: boolean }): DomainError | undefined {
  if (holdsScope(by.scopes, by.isOperator, '*')) return undefined;
  return refuse('INSUFFICIENT_SCOPE', 'Rotating the signing key needs a key holding *.', {
    required: ['*'],
    granted: [...by.scopes],
  });
}

/**
 * Registering or revoking an external public key needs `*`: a registered key signs codes of every
 * GTIN the account owns that verify AUTHENTIC (and revoking one makes the codes it signed
 * COUNTERFEIT), so, like the signing key, it counts as a key holding `*`.
 */
export function decidePublicKeyChange(
  by: { scopes: readonly Scope[]; isOperator: boolean },
  change: 'register' | 'revoke',
): DomainError | undefined {
  if (holdsScope(by.scopes, by.isOperator, '*')) return undefined;
  return refuse(
    'INSUFFICIENT_SCOPE',
    `${change === 'register' ? 'Registering' : 'Revoking'} a public key needs a key holding *.`,
    {
      required: ['*'],
      granted: [...by.scopes],
    },
  );
}

function decideIssue(cmd: Extract<ApiKeyCommand, { type: 'IssueKey' }>, s: AccountKeys): ApiKeyEvent[] | DomainError {
  const { creator } = cmd;
  let environment: Environment;
  if (creator) {
    const decided = decideEnvironment(creator.environment, cmd.environment, 'create');
    if (typeof decided !== 'string') return decided;
    environment = decided;
  } else if (cmd.environment) {
    environment = cmd.environment;
  } else {
    return refuse('VALIDATION_ERROR', 'A key made without a creating key needs an environment.', {
      fields: [{ field: 'environment', in: 'body', message: 'is required' }],
    });
  }
  // Without a creating key (the operator's tools) the account may hold any scope but, unless it is
  // the operator's, accounts:write.
  const held = creator ? creator.scopes : (['*'] as const);
  const beyond = scopesBeyond(held, s.isOperator, cmd.scopes);
  if (beyond.length > 0) {
    return refuse(
      'INSUFFICIENT_SCOPE',
      creator
        ? `A key can grant only scopes it holds itself; this one lacks ${beyond.join(', ')}.`
        : `Account ${s.accountId} cannot hold ${beyond.join(', ')}.`,
      { required: beyond, granted: [...held] },
    );
  }
  let restrictions: Restrictions | null = null;
  if (cmd.restrictions !== undefined) {
    const decided = restrictionsOf(cmd.restrictions);
    if (!('gtins' in decided)) return decided;
    restrictions = decided;
  }
  // A restricted key makes only keys restricted within its own GTINs.
  const beyondRestrictions = refusalBeyondRestrictions(creator ? creator.restrictions : null, restrictions, 'create');
  if (beyondRestrictions) return beyondRestrictions;
  let expiresAt: Date | null = null;
  if (cmd.expiresIn !== undefined) {
    const parsed = parseExpiresIn(cmd.expiresIn);
    if (!parsed.ok) {
      return refuse('VALIDATION_ERROR', `Invalid request: expiresIn ${parsed.message}.`, {
        fields: [{ field: 'expiresIn', in: 'body', message: parsed.message }],
      });
    }
    expiresAt = new Date(cmd.now.getTime() + parsed.milliseconds);
  }
  // A new key never outlives the key that made it.
  if (creator?.expiresAt && (expiresAt === null || expiresAt > creator.expiresAt)) expiresAt = creator.expiresAt;
  return [
    {
      type: 'KeyIssued',
      data: {
        keyId: cmd.keyId,
        accountId: s.accountId,
        environment,
        name: cmd.name,
        scopes: [...cmd.scopes],
        createdBy: creator?.keyId ?? null,
        createdAt: cmd.now.toISOString(),
        expiresAt: expiresAt?.toISOString() ?? null,
        ...(restrictions ? { restrictions: { gtins: [...restrictions.gtins] } } : {}),
      },
    },
  ];
}

function decideRevoke(cmd: Extract<ApiKeyCommand, { type: 'RevokeKey' }>, s: AccountKeys): ApiKeyEvent[] | DomainError {
  const target = s.keys.get(cmd.keyId);
  if (!target || target.environment !== cmd.environment) {
    return refuse('NOT_FOUND', 'There is no key with this id.', { id: cmd.keyId });
  }
  // A narrow keys:write key must not switch off the account's stronger keys.
  if (cmd.by) {
    const beyond = scopesBeyond(cmd.by.scopes, s.isOperator, target.scopes);
    if (beyond.length > 0) {
      return refuse(
        'INSUFFICIENT_SCOPE',
        `A key can revoke only keys whose scopes it holds itself; this one lacks ${beyond.join(', ')}.`,
        { required: beyond, granted: [...cmd.by.scopes] },
      );
    }
    const beyondRestrictions = refusalBeyondRestrictions(cmd.by.restrictions, target.restrictions, 'revoke');
    if (beyondRestrictions) return beyondRestrictions;
  }
  // Idempotent: the first revocation stands.
  if (target.revokedAt !== null) return [];
  return [{ type: 'KeyRevoked', data: { keyId: cmd.keyId, revokedAt: cmd.now.toISOString(), revokedBy: cmd.by?.keyId ?? null } }];
}

export function decide(cmd: ApiKeyCommand, s: AccountKeys): ApiKeyEvent[] | DomainError {
  switch (cmd.type) {
    case 'IssueKey':
      return decideIssue(cmd, s);
    case 'RevokeKey':
      return decideRevoke(cmd, s);
    default: {
      const unknown: never = cmd;
      throw new Error(`Unknown command ${JSON.stringify(unknown)}`);
    }
  }
}

export function evolve(s: AccountKeys, event: ApiKeyEvent): AccountKeys {
  switch (event.type) {
    case 'KeyIssued': {
      const keys = new Map(s.keys);
      const { keyId, environment, scopes, expiresAt, restrictions } = event.data;
      keys.set(keyId, { id: keyId, environment, scopes, expiresAt, revokedAt: null, restrictions: restrictions ?? null });
      return { ...s, keys };
    }
    case 'KeyRevoked': {
      const key = s.keys.get(event.data.keyId);
      if (!key || key.revokedAt !== null) return s;
      const keys = new Map(s.keys);
      keys.set(key.id, { ...key, revokedAt: event.data.revokedAt });
      return { ...s, keys };
    }
    default: {
      const unknown: never = event;
      throw new Error(`Unknown event ${JSON.stringify(unknown)}`);
    }
  }
}

/** The state the shell loads: the account and the rows of the keys a command needs. */
export function accountKeysOf(
  account: { id: string; isOperator: boolean },
  rows: readonly {
    id: string;
    environment: Environment;
    scopes: readonly Scope[];
    expiresAt: Date | null;
    revokedAt: Date | null;
    restrictions: Restrictions | null;
  }[],
): AccountKeys {
  return {
    accountId: account.id,
    isOperator: account.isOperator,
    keys: new Map(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          environment: row.environment,
          scopes: row.scopes,
          expiresAt: row.expiresAt?.toISOString() ?? null,
          revokedAt: row.revokedAt?.toISOString() ?? null,
          restrictions: row.restrictions,
        },
      ]),
    ),
  };
}
