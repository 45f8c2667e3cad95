import {
  decideGrantEnvironment,
  findAccount,
  type GtinClaimTarget,
  gtinClaimReach,
  listGtinClaims,
  throwRefusal,
} from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import {
  broadcasts,
  type GtinClaimInput,
  type GtinClaimList,
  type GtinClaimView,
  HallmarkError,
  type ListGtinClaimsQuery,
  type Principal,
} from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { checkGtin14 } from '@hallmark/gs1';
import type { SqlDatabase } from '@hallmark/sql';
import { recordGtinClaimGivingWay, recordGtinRevocation } from '../gtin-claim-log.ts';

export interface GtinClaimDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  bus: Bus;
  clock: () => Date;
  /** HALLMARK_SELF_SERVICE_TEST_CLAIMS: accounts may claim for themselves, in the test environment only. */
  selfServiceTestClaims: boolean;
}

/** Exactly one of gtin and prefix; a GTIN with a valid check digit. */
/**
 * GS1's restricted-circulation range (a GTIN-13 starting with 2: prefixes 20–29, for use inside
 * one organisation, never a brand's trade items) holds every auction object's label GTIN
 * (objectGtin, docs/AUCTION.md). No grant or claim may take any of it: a claim over it, a sandbox
 * key's test claims over prefixes 2000–2999 say, would refuse every object's registration.
 */
function refuseObjectRange(target: GtinClaimTarget): void {
  const gtin13 = target.kind === 'gtin' ? target.value.slice(1) : target.value;
  if (!gtin13.startsWith('2')) return;
  const field = target.kind === 'gtin' ? 'gtin' : 'prefix';
  throw new HallmarkError(
    'VALIDATION_ERROR',
    `Invalid request: ${field} is in GS1's restricted-circulation range (2), which Hallmark keeps for auction object labels.`,
    { fields: [{ field, in: 'body', message: "is in GS1's restricted-circulation range (2), kept for auction object labels" }] },
  );
}

function targetOf(input: GtinClaimInput): GtinClaimTarget {
  if ((input.gtin === undefined) === (input.prefix === undefined)) {
    throw new HallmarkError('VALIDATION_ERROR', 'Invalid request: give exactly one of gtin and prefix.', {
      fields: [
        { field: input.gtin === undefined ? 'gtin' : 'prefix', in: 'body', message: 'give exactly one of gtin and prefix' },
      ],
    });
  }
  if (input.gtin !== undefined) {
    const check = checkGtin14(input.gtin);
    if (!check.ok) {
      throw new HallmarkError('INVALID_GTIN', `Invalid GTIN: ${check.message}.`, {
        provided: input.gtin,
        expected: check.reason === 'check-digit' ? check.expected : '14 digits with a valid GS1 check digit',
      });
    }
    const target = { kind: 'gtin' as const, value: input.gtin };
    refuseObjectRange(target);
    return target;
  }
  const target = { kind: 'prefix' as const, value: input.prefix as string };
  refuseObjectRange(target);
  return target;
}

/**
 * Grants, claims and revocations of GTINs and company prefixes (docs/SIGNING.md, "Who may sign").
 * Each is an event in the account's stream with its row in the same transaction
 * (gtin-claim-log.ts), then broadcast, so every replica's caches of who may sign what are dropped
 * at once.
 */
export function createGtinClaims(deps: GtinClaimDeps) {
  const changed = (claim: GtinClaimView) => deps.bus.broadcast(broadcasts.gtinOwnershipChanged, { [claim.kind]: claim.value });

  const store = async (
    accountId: string,
    environment: 'live' | 'test',
    target: GtinClaimTarget,
    source: 'granted' | 'claimed',
    by: Principal,
  ) => {
    const { claim, revoked } = await recordGtinClaimGivingWay(
      deps,
      { accountId, environment, target, source },
      by.accountId,
      deps.clock(),
    );
    await changed(claim);
    // Each claim that gave way is told as a revocation is: every replica drops what it cached of it.
    for (const other of revoked) await changed(other);
    return claim;
  };

  return {
    /**
     * The operator grants `accountId` a GTIN or prefix, in the operator key's environment unless said
     * otherwise (live covers both). A test key (or a console session switched to test) grants test
     * claims only: INSUFFICIENT_SCOPE for live. A live grant revokes other accounts' overlapping
     * self-service test claims in its transaction (a sandbox key cannot block a brand's onboarding);
     * any other overlap with another account's claim is CONFLICT. The answer is the grant alone.
     */
    async grant(operator: Principal, accountId: string, input: GtinClaimInput): Promise<GtinClaimView> {
      const environment = decideGrantEnvironment(operator.environment, input.environment);
      if (typeof environment !== 'string') throwRefusal(environment);
      const target = targetOf(input);
      if (!(await findAccount(deps.db, accountId))) {
        throw new HallmarkError('NOT_FOUND', 'There is no account with this id.', { accountId });
      }
      return store(accountId, environment, target, 'granted', operator);
    },

    /** An account claims for itself: only in the test environment, and only where the operator allows it. */
    async claim(principal: Principal, input: GtinClaimInput): Promise<GtinClaimView> {
      const target = targetOf(input);
      if (principal.environment !== 'test' || (input.environment ?? 'test') !== 'test' || !deps.selfServiceTestClaims) {
        throw new HallmarkError(
          'GTIN_CLAIM_NOT_ALLOWED',
          'GTINs and company prefixes are granted by the operator (POST /api/v1/accounts/{accountId}/gtins); self-service claims are allowed only with a test key where the operator enabled them.',
          { environment: principal.environment },
        );
      }
      return store(principal.accountId, 'test', target, 'claimed', principal);
    },

    /**
     * `accountId`'s claims in the environments the caller reaches (an account's key: its own
     * environment's). The operator naming an account that does not exist is NOT_FOUND, as its grant
     * would be, not an empty list.
     */
    async list(principal: Principal, accountId: string, query: ListGtinClaimsQuery, asOperator: boolean): Promise<GtinClaimList> {
      const { environments } = gtinClaimReach(principal, asOperator);
      if (asOperator && !(await findAccount(deps.db, accountId))) {
        throw new HallmarkError('NOT_FOUND', 'There is no account with this id.', { accountId });
      }
      return listGtinClaims(deps.db, accountId, {
        limit: query.limit ?? 20,
        cursor: query.cursor,
        status: query.status,
        environments,
      });
    },

    /**
     * The owner gives a claim up, or the operator takes it away. A claim out of the caller's reach
     * (another account's, or another environment's: a test key never touches a live claim) is
     * NOT_FOUND, as an unknown id is. A claim others made for the owner (granted, registered,
     * migrated) is given up only with a key holding `*` (holdsAll): every code printed under it stops
     * verifying, and the owner cannot take it back, so a packaging line's `assets:create` key must
     * not be able to (as registering or revoking a public key needs `*`).
     */
    async revoke(principal: Principal, claimId: string, asOperator: boolean, holdsAll = false): Promise<GtinClaimView> {
      const revoked = await recordGtinRevocation(
        deps,
        claimId,
        gtinClaimReach(principal, asOperator),
        principal.accountId,
        deps.clock(),
        (claim) => (asOperator || holdsAll || claim.source === 'claimed' ? undefined : giveUpNeedsAll(claim)),
      );
      if (!revoked) throw new HallmarkError('NOT_FOUND', 'There is no GTIN claim with this id.', { claimId });
      if (revoked.changed) await changed(revoked.claim);
      return revoked.claim;
    },
  };
}
export type GtinClaims = ReturnType<typeof createGtinClaims>;

/** The refusal of a narrow key's giving up a claim others made for its account. */
function giveUpNeedsAll(claim: GtinClaimView): HallmarkError {
  return new HallmarkError(
    'INSUFFICIENT_SCOPE',
    `Giving up a ${claim.kind === 'gtin' ? 'GTIN' : 'prefix'} ${claim.source === 'granted' ? 'the operator granted' : 'this account was given'} needs a key holding *: every code printed under it stops verifying, and only the operator can grant it again.`,
    { required: ['*'], claimId: claim.id, source: claim.source },
  );
}
