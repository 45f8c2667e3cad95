// Rotating an API key, as a decider (no I/O, no clock): a new key with the old one's name,
// environment, scopes and lifetime, and the old key's expiry brought forward to the end of a grace
// period, so clients can move to the new secret before the old one stops working. The shell writes
// the new key's row and the old key's expiry in the transaction of the two events.

import { type DomainError as ContractsDomainError, type Environment, refuse, type Scope } from '@hallmark/contracts';
import { scopesBeyond } from '../scope-rules.ts';
import { type Restrictions, refusalBeyondRestrictions } from './key-restrictions.ts';

/** The grace periods a rotation may leave the old key, in seconds: none, 15 min, 1 h, 1 day. */
export const rotationGraceSeconds = [0, 900, 3600, 86400] as const;
export type RotationGraceSeconds = (typeof rotationGraceSeconds)[number];

/** The key being rotated, as stored. */
export interface RotatedKeyFacts {
  id: string;
  accountId: string;
  environment: Environment;
  name: string;
  scopes: readonly Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The key a rotation of it made already; null if none. */
  replacedBy: string | null;
  /** The GTINs it is restricted to (its replacement is restricted alike); null: not restricted. */
  restrictions: Restrictions | null;
}

export interface RotateKey {
  type: 'RotateKey';
  /** The new key's id, made by the shell. */
  newKeyId: string;
  graceSeconds: RotationGraceSeconds;
  /** The key asking (its scopes, in the environment it acts in); null for the operator's tools. */
  by: {
    keyId: string;
    environment: Environment;
    scopes: readonly Scope[];
    expiresAt: Date | null;
    restrictions: Restrictions | null;
  } | null;
  /** Whether the account is the operator's (the only one whose keys may hold accounts:write). */
  accountIsOperator: boolean;
  now: Date;
}

export type KeyRotationEvent =
  | {
      type: 'KeyIssued';
      data: {
        keyId: string;
        accountId: string;
        environment: Environment;
        name: string;
        scopes: Scope[];
        createdBy: string | null;
        createdAt: string;
        expiresAt: string | null;
        /** The GTINs the key is restricted to, as the key it replaces was; absent: not restricted. */
        restrictions?: { gtins: string[] };
        /** The key this one replaces. */
        replaces: string;
      };
    }
  | {
      type: 'KeyRotated';
      data: {
        keyId: string;
        replacedBy: string;
        graceSeconds: RotationGraceSeconds;
        /** The old key's expiry now: the end of the grace period, or its own expiry if sooner. */
        expiresAt: string;
        rotatedBy: string | null;
        rotatedAt: string;
      };
    };

export type RotationRefusal = ContractsDomainError<
  'INSUFFICIENT_SCOPE' | 'KEY_RESTRICTED' | 'NOT_FOUND' | 'CONFLICT' | 'VALIDATION_ERROR'
>;

/**
 * Decides rotating `target` (undefined: no such key of the asker's account and environment):
 * NOT_FOUND; CONFLICT for a revoked or expired key (make a new one instead) or one rotated already
 * (details `replacedBy`: rotate that one; its lifetime is no longer readable); VALIDATION_ERROR for a
 * key rotating itself with no grace; INSUFFICIENT_SCOPE
 * when the asker lacks one of the key's scopes (a narrow key may neither revoke nor mint a stronger
 * one), or KEY_RESTRICTED when the asker is restricted and the key reaches past its GTINs. Else the
 * new key (same name, environment, scopes and restrictions; the same lifetime from now, never past
 * the asker's own expiry) and the old key's new expiry, now + grace, or its own if sooner.
 */
export function decideKeyRotation(
  target: RotatedKeyFacts | undefined,
  cmd: RotateKey,
): [Extract<KeyRotationEvent, { type: 'KeyIssued' }>, Extract<KeyRotationEvent, { type: 'KeyRotated' }>] | RotationRefusal {
  if (!target || (cmd.by && target.environment !== cmd.by.environment)) {
    return refuse('NOT_FOUND', 'There is no API key with this id.', {});
  }
  if (target.revokedAt) {
    return refuse('CONFLICT', 'A revoked key cannot be rotated; create a new key.', { id: target.id });
  }
  const nowMs = cmd.now.getTime();
  if (target.expiresAt && target.expiresAt.getTime() <= nowMs) {
    return refuse('CONFLICT', 'An expired key cannot be rotated; create a new key.', { id: target.id });
  }
  // A key rotating itself with no grace: its answer is the only copy of the new secret, and a retry
  // after a lost answer would come with a key that no longer works (401), locking its holder out.
  if (cmd.by?.keyId === target.id && cmd.graceSeconds === 0) {
    return refuse(
      'VALIDATION_ERROR',
      'A key cannot rotate itself with no grace period: if the answer were lost, the new secret would be lost with it and the key could not retry. Rotate with graceSeconds 900 or more, then revoke this key with the new one.',
      { fields: [{ field: 'graceSeconds', in: 'body', message: 'must be 900 or more when a key rotates itself' }] },
    );
  }
  if (cmd.by) {
    const beyond = scopesBeyond(cmd.by.scopes, cmd.accountIsOperator, target.scopes);
    if (beyond.length > 0) {
      return refuse(
        'INSUFFICIENT_SCOPE',
        `A key can rotate only keys whose scopes it holds itself; this one lacks ${beyond.join(', ')}.`,
        { required: beyond, granted: [...cmd.by.scopes] },
      );
    }
    const beyondRestrictions = refusalBeyondRestrictions(cmd.by.restrictions, target.restrictions, 'rotate');
    if (beyondRestrictions) return beyondRestrictions;
  }
  // Replaced once already, and in its grace period (told only to a key that may rotate it: the
  // answer names the replacement): its expiry is the grace's end now, not its
  // lifetime, and a second replacement would make two keys of one. Rotate the replacement, or
  // revoke this key to end its grace at once.
  if (target.replacedBy !== null) {
    return refuse(
      'CONFLICT',
      `This key was rotated already and is in its grace period; its replacement is ${target.replacedBy}. Rotate that key instead, or revoke this one to stop it now.`,
      { id: target.id, replacedBy: target.replacedBy },
    );
  }
  // The same lifetime as the old key, from now; never past the asking key's own expiry.
  let newExpiresMs = target.expiresAt ? nowMs + (target.expiresAt.getTime() - target.createdAt.getTime()) : null;
  const askerExpiresMs = cmd.by?.expiresAt?.getTime() ?? null;
  if (askerExpiresMs !== null && (newExpiresMs === null || newExpiresMs > askerExpiresMs)) newExpiresMs = askerExpiresMs;
  const graceEndMs = nowMs + cmd.graceSeconds * 1000;
  const oldExpiresMs = target.expiresAt ? Math.min(target.expiresAt.getTime(), graceEndMs) : graceEndMs;
  return [
    {
      type: 'KeyIssued',
      data: {
        keyId: cmd.newKeyId,
        accountId: target.accountId,
        environment: target.environment,
        name: target.name,
        scopes: [...target.scopes],
        createdBy: cmd.by?.keyId ?? null,
        createdAt: cmd.now.toISOString(),
        expiresAt: newExpiresMs === null ? null : new Date(newExpiresMs).toISOString(),
        ...(target.restrictions ? { restrictions: { gtins: [...target.restrictions.gtins] } } : {}),
        replaces: target.id,
      },
    },
    {
      type: 'KeyRotated',
      data: {
        keyId: target.id,
        replacedBy: cmd.newKeyId,
        graceSeconds: cmd.graceSeconds,
        expiresAt: new Date(oldExpiresMs).toISOString(),
        rotatedBy: cmd.by?.keyId ?? null,
        rotatedAt: cmd.now.toISOString(),
      },
    },
  ];
}
