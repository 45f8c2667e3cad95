import {
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
  const view = newGtinClaim(claim, now);
  await deps.eventStore.append(
    accountStream({ accountId: view.accountId, environment: view.environment }),
    [{ type: claim.source === 'granted' ? 'gtin.granted' : 'gtin.claimed', data: { ...view, by } }],
    { expectedVersion: 'any', readModels: { db: deps.db, write: (sql) => insertGtinClaim(sql, view, by) } },
  );
  return view;
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
): Promise<{ claim: GtinClaimView; changed: boolean } | undefined> {
  const existing = await findGtinClaim(deps.db, claimId, reach);
  if (!existing) return undefined;
  if (existing.status === 'revoked') return { claim: existing, changed: false };
  const revoked: GtinClaimView = { ...existing, status: 'revoked', revokedAt: now.toISOString() };
  await deps.eventStore.append(
    accountStream({ accountId: existing.accountId, environment: existing.environment }),
    [{ type: 'gtin.revoked', data: { ...revoked, by } }],
    {
      expectedVersion: 'any',
      readModels: {
        db: deps.db,
        async write(sql) {
          if (!(await revokeGtinClaim(sql, claimId, now, by))) {
            throw new HallmarkError('CONFLICT', 'This claim was revoked meanwhile.', { claimId });
          }
        },
      },
    },
  );
  return { claim: revoked, changed: true };
}
