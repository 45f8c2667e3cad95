/**
 * What the public verification reads from an object's history, kept per object and stream version
 * (docs/AUCTION.md, "Public verification"): reading, folding and re-hashing a whole history is what
 * a keyless request costs, so a serial asked for again while its stream has not moved is answered
 * from here after one indexed look-up of the stream's version. The version is the key: an event
 * appended by any replica moves it, and the next request reads the history afresh. Time does not
 * keep an answer: it only makes a hot entry re-read its history now and then, so that a stored
 * event altered outside the API (which moves no version) still shows as a broken chain.
 */

/** Bounded: a flood of serials evicts the least recently asked, never grows the process. */
export const publicFactsCacheEntries = 10_000;

/** A cached entry whose chain was checked longer ago than this is read and checked again. */
export const publicFactsRecheckMs = 60_000;

export interface CachedFacts {
  /** The object's id (a serial always names the same object). */
  id: string;
  /** The stream version the facts were folded at. */
  version: number;
}

export interface PublicFactsCache<F extends CachedFacts> {
  /** The entry of `serial` (marked as recently used), or undefined; an entry due for a re-check still gives its id. */
  find(serial: string): { facts: F; due: boolean } | undefined;
  /**
   * The object's facts at `version` or later: kept ones when they are (a load that finished since the
   * caller looked), else `load`'s, shared by every request for the same object and version while it
   * runs, and kept unless a newer version is kept already.
   */
  load(serial: string, id: string, version: number, load: () => Promise<F | undefined>): Promise<F | undefined>;
  readonly size: number;
}

export function createPublicFactsCache<F extends CachedFacts>(
  options: { maxEntries?: number; recheckMs?: number; now?: () => number } = {},
): PublicFactsCache<F> {
  const maxEntries = options.maxEntries ?? publicFactsCacheEntries;
  const recheckMs = options.recheckMs ?? publicFactsRecheckMs;
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  const entries = new Map<string, { facts: F; checkedAt: number }>();
  const running = new Map<string, Promise<F | undefined>>();

  const keep = (serial: string, facts: F, checkedAt: number) => {
    const existing = entries.get(serial);
    if (existing && existing.facts.version > facts.version) return;
    entries.delete(serial);
    entries.set(serial, { facts, checkedAt });
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next().value as string;
      entries.delete(oldest);
    }
  };

  return {
    find(serial) {
      const entry = entries.get(serial);
      if (!entry) return undefined;
      entries.delete(serial);
      entries.set(serial, entry);
      return { facts: entry.facts, due: now() - entry.checkedAt >= recheckMs };
    },
    load(serial, id, version, load) {
      const key = `${id}@${version}`;
      const existing = running.get(key);
      if (existing) return existing;
      // A load that was running when the caller looked may have kept these facts (or newer) since.
      const kept = entries.get(serial);
      if (kept && kept.facts.version >= version && now() - kept.checkedAt < recheckMs) return Promise.resolve(kept.facts);
      const startedAt = now();
      const shared = load()
        .then((facts) => {
          if (facts) keep(serial, facts, startedAt);
          return facts;
        })
        .finally(() => {
          if (running.get(key) === shared) running.delete(key);
        });
      running.set(key, shared);
      return shared;
    },
    get size() {
      return entries.size;
    },
  };
}
