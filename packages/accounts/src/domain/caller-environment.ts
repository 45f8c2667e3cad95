// What a caller's environment lets it reach. Data of test and live keys never mix (DECISIONS.md):
// a test key, or a console session switched to test, acts in test only, whatever its scopes (the
// operator's `*`, and so `accounts:write`, included). A live caller may also act in test, as a live
// key may make test keys (decideEnvironment in api-keys.ts). Pure: no I/O.

import { type DomainError, type Environment, type Principal, refuse } from '@hallmark/contracts';

export type CallerEnvironmentRefusal = DomainError<'INSUFFICIENT_SCOPE'>;

function refuseTestCaller(action: string): CallerEnvironmentRefusal {
  return refuse('INSUFFICIENT_SCOPE', `A test key cannot ${action}; use a live key.`, {
    required: 'environment:live',
    granted: 'environment:test',
  });
}

/**
 * An operator action that reaches live (creating an account, which mints its first key): allowed
 * to a live caller only. Undefined when allowed.
 */
export function decideLiveOnlyAction(caller: Environment, action: string): CallerEnvironmentRefusal | undefined {
  return caller === 'live' ? undefined : refuseTestCaller(action);
}

/**
 * The environment of an operator's GTIN grant: the caller's by default (so `live`, covering both, for
 * a live caller); a test caller may grant test claims but never live ones, which decide whose
 * printed codes verify.
 */
export function decideGrantEnvironment(
  caller: Environment,
  requested: Environment | undefined,
): Environment | CallerEnvironmentRefusal {
  const environment = requested ?? caller;
  return caller === 'test' && environment === 'live' ? refuseTestCaller('grant live GTIN claims') : environment;
}

/** The GTIN claims a caller may see and revoke: of one account (anyone's when undefined), in these environments. */
export interface GtinClaimReach {
  accountId: string | undefined;
  environments: readonly Environment[];
}

/**
 * An account's key reaches its own account's claims of its own environment; the operator (a key
 * holding `accounts:write`) reaches every account's, in both environments with a live key and in
 * test only with a test key. A claim out of reach answers as one that does not exist.
 */
export function gtinClaimReach(caller: Principal, asOperator: boolean): GtinClaimReach {
  if (!asOperator) return { accountId: caller.accountId, environments: [caller.environment] };
  return { accountId: undefined, environments: caller.environment === 'live' ? ['live', 'test'] : ['test'] };
}
