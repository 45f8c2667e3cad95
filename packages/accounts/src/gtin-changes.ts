import { claimCovers, type GtinClaimTarget } from './gtin-ownership.ts';

/** Changes remembered one by one; past these, an older entry is taken as gone whatever its GTIN. */
const maxRemembered = { gtins: 50_000, prefixes: 100 };

/**
 * Which GTINs' claims changed, as this replica heard (the `gtins.ownership-changed` broadcast names
 * the claim's GTIN or prefix), so a cache of per-GTIN answers (signers, issuers, an item's codes) drops
 * only what the change is about. It dropped everything: every auction object's registration claims
 * its GTIN, so one auction house registering objects emptied every tenant's cached codes on every
 * replica, and each verification went back to the database.
 *
 * A cache takes `stamp()` as a load begins and, on use, keeps the entry while `isCurrent(gtin,
 * stamp)`: false once a change covering the GTIN was heard after the load began (so a load racing a
 * change is not kept either). O(1) on use unless a prefix changed since the entry was loaded.
 */
export interface GtinChanges {
  stamp(): number;
  isCurrent(gtin: string, stamp: number): boolean;
  /** A claim on this GTIN or prefix changed; undefined when the change does not say which (every entry goes). */
  changed(target: GtinClaimTarget | undefined): void;
}

export function createGtinChanges(): GtinChanges {
  let sequence = 0;
  // Entries loaded before it are gone (an unnamed change, or more changes than are remembered).
  let floor = 0;
  const gtinChangedAt = new Map<string, number>();
  const prefixChanges: Array<{ prefix: string; at: number }> = [];
  return {
    stamp: () => sequence,
    isCurrent(gtin, stamp) {
      if (stamp < floor || stamp < (gtinChangedAt.get(gtin) ?? 0)) return false;
      const newest = prefixChanges.at(-1);
      if (!newest || newest.at <= stamp) return true;
      return !prefixChanges.some(({ prefix, at }) => at > stamp && claimCovers({ kind: 'prefix', value: prefix }, gtin));
    },
    changed(target) {
      sequence += 1;
      if (target?.kind === 'gtin' && gtinChangedAt.size < maxRemembered.gtins) {
        gtinChangedAt.delete(target.value); // re-inserted last, as the newest
        gtinChangedAt.set(target.value, sequence);
      } else if (target?.kind === 'prefix' && prefixChanges.length < maxRemembered.prefixes) {
        prefixChanges.push({ prefix: target.value, at: sequence });
      } else {
        floor = sequence;
        gtinChangedAt.clear();
        prefixChanges.length = 0;
      }
    },
  };
}

/** The claim a `gtins.ownership-changed` broadcast names (`{ gtin }` or `{ prefix }`); undefined for anything else. */
export function changedClaimOf(payload: unknown): GtinClaimTarget | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { gtin, prefix } = payload as { gtin?: unknown; prefix?: unknown };
  if (typeof gtin === 'string' && /^\d{14}$/.test(gtin)) return { kind: 'gtin', value: gtin };
  if (typeof prefix === 'string' && /^\d{4,12}$/.test(prefix)) return { kind: 'prefix', value: prefix };
  return undefined;
}
