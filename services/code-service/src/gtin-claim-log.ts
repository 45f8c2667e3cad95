import {
  findClaimsGivingWay,
  findGtinClaim,
  type GtinClaimReach,
  type GtinClaimTarget,
  insertGtinClaim,
  newGtinClaim,
  revokeGtinClaim,
} from '@hallmark/accounts';
import { type Environment, type GtinClaimView, HallmarkError } from '@hallmark/contracts';
import type { EventStore } from '@hallmark/event-store';
import { accountStream } from '@hallmark/provenance';
import type { SqlDatabase } from '@hallmark/sql';

/** The claims giving way to a grant changed between the grant's look and its transaction: look again. */
class ClaimsGivingWayMoved extends Error {}

/** How many times a grant looks again when the claims giving way to it change meanwhile (a race). */
const givingWayAttempts = 3;

/**
 * Grants, claims and revocations of GTINs, each an event in the account's stream with the claim
 * row written in the event's transaction: a claim is stored with its audit record or not at all,
 * and a refusal (an overlapping claim of another account) stores no event. Used by code-service's
 * handlers and by the `hallmark gtins` command alike.
 */
export async function recordGtinClaim(
  deps: { db: SqlDatabase; eventStore: EventStore },
  claim: { accountId: string; environment: Environment; target: GtinClaimTarget; source: 'granted' | 'claimed' },
  by: string,
  now: Date,
): Promise<GtinClaimView> {
  return (await recordGtinClaimGivingWay(deps, claim, by, now)).claim;
}

/**
 * As recordGtinClaim, and also answers the claims that gave way to it (`revoked`, as revoked): a
 * live grant revokes other accounts' overlapping self-service test claims in its own transaction
 * (insertGtinClaim, givesWayTo). The grant's event names them (`revokes`: each as revoked), so the
 * grant, their revocation and its record are one write. The claims to name are looked up before
 * the write and checked again in it, under the claims' lock; should they have changed meanwhile (a
 * claim made or given up in between), nothing is stored and the grant looks again.
 */
export async function recordGtinClaimGivingWay(
  deps: { db: SqlDatabase; eventStore: EventStore },
  claim: { accountId: string; environment: Environment; target: GtinClaimTarget; source: 'granted' | 'claimed' },
  by: string,
  now: Date,
): Promise<{ claim: GtinClaimView; revoked: GtinClaimView[] }> {
  const view = newGtinClaim(claim, now);
  const type = claim.source === 'granted' ? 'gtin.granted' : 'gtin.claimed';
  for (let attempt = 1; ; attempt++) {
    const expected = (await findClaimsGivingWay(deps.db, view)).map(
      (other): GtinClaimView => ({ ...other, status: 'revoked', revokedAt: view.createdAt }),
    );
    let revoked: GtinClaimView[] = [];
    try {
      await deps.eventStore.append(
        accountStream({ accountId: view.accountId, environment: view.environment }),
        [{ type, data: { ...view, by, ...(expected.length > 0 ? { revokes: expected } : {}) } }],
        {
          expectedVersion: 'any',
          readModels: {
            db: deps.db,
            async write(sql) {
              revoked = await insertGtinClaim(sql, view, by);
              const same =
                revoked.length === expected.length && revoked.every((other, index) => other.id === expected[index]?.id);
              // Where the event is already stored (a store whose read models follow it), it stands as it is.
              if (!same && deps.eventStore.atomicReadModels) throw new ClaimsGivingWayMoved();
            },
          },
        },
      );
      return { claim: view, revoked };
    } catch (error) {
      if (!(error instanceof ClaimsGivingWayMoved)) throw error;
      if (attempt >= givingWayAttempts) {
        throw new HallmarkError('CONFLICT', 'Claims overlapping this one changed while it was made; try again.', {
          [view.kind]: view.value,
        });
      }
    }
  }
}

/**
 * Revokes a claim within `reach` (whose claims, in which environments, the caller may touch):
 * `changed` is false when it was revoked already (the first revocation stands, and nothing is
 * recorded again); undefined when there is no such claim within reach.
 */
export async function recordGtinRevocation(
  deps: { db: SqlDatabase; eventStore: EventStore },
  claimId: string,
  reach: GtinClaimReach,
  by: string,
  now: Date,
  /** A refusal of this caller's giving the claim up, if any (thrown before anything is written). */
  refusalOf: (claim: GtinClaimView) => Error | undefined = () => undefined,
): Promise<{ claim: GtinClaimView; changed: boolean } | undefined> {
  const existing = await findGtinClaim(deps.db, claimId, reach);
  if (!existing) return undefined;
  if (existing.status === 'revoked') return { claim: existing, changed: false };
  const refusal = refusalOf(existing);
  if (refusal) throw refusal;
  const revoked: GtinClaimView = { ...existing, status: 'revoked', revokedAt: now.toISOString() };
  try {
    await deps.eventStore.append(
      accountStream({ accountId: existing.accountId, environment: existing.environment }),
      [{ type: 'gtin.revoked', data: { ...revoked, by } }],
      {
        expectedVersion: 'any',
        readModels: {
          db: deps.db,
          async write(sql) {
            if (!(await revokeGtinClaim(sql, claimId, now, by))) throw new RevokedMeanwhile();
          },
        },
      },
    );
  } catch (error) {
    if (!(error instanceof RevokedMeanwhile)) throw error;
    // Another revocation (through another replica, say) came first: its answer stands, this one
    // records nothing (rolled back with the append) and answers the claim as it was revoked.
    const stored = await findGtinClaim(deps.db, claimId, reach);
    return stored ? { claim: stored, changed: false } : undefined;
  }
  return { claim: revoked, changed: true };
}

/** The claim was revoked between its read and the revocation's write: the first revocation stands. */
class RevokedMeanwhile extends Error {}
