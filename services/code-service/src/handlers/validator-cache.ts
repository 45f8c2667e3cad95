/**
 * Compiled metadata validators by owner, the least recently used dropped first, with a share per
 * owner: an owner past its share drops its own least recent validator, never another owner's. So a
 * tenant cycling through schema versions (each PATCH is a new version) recompiles only its own,
 * and other tenants' generates keep theirs (a compile of 200 fields takes ~17 ms on the event loop).
 */
export function createValidatorCache<Validator>(options: { maxEntries: number; maxPerOwner: number }) {
  /** By `owner key`, in order of last use (a Map keeps insertion order: the first is the least recent). */
  const entries = new Map<string, { owner: string; validator: Validator }>();
  const countByOwner = new Map<string, number>();
  const entryKey = (owner: string, key: string) => `${owner}\u0000${key}`;

  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    const count = (countByOwner.get(entry.owner) ?? 1) - 1;
    if (count > 0) countByOwner.set(entry.owner, count);
    else countByOwner.delete(entry.owner);
  };

  /** Makes room for one more validator of `owner`: its own least recent past its share, else the least recent of all. */
  const makeRoomFor = (owner: string) => {
    if ((countByOwner.get(owner) ?? 0) >= options.maxPerOwner) {
      for (const [key, entry] of entries) {
        if (entry.owner !== owner) continue;
        drop(key);
        return;
      }
    }
    if (entries.size >= options.maxEntries) {
      const leastRecent = entries.keys().next().value;
      if (leastRecent !== undefined) drop(leastRecent);
    }
  };

  return {
    /** The owner's validator for `key`, compiled (by `compile`, which may throw) when not held. */
    get(owner: string, key: string, compile: () => Validator): Validator {
      const at = entryKey(owner, key);
      const held = entries.get(at);
      if (held) {
        entries.delete(at); // set again, last: the most recently used
        entries.set(at, held);
        return held.validator;
      }
      const validator = compile();
      makeRoomFor(owner);
      entries.set(at, { owner, validator });
      countByOwner.set(owner, (countByOwner.get(owner) ?? 0) + 1);
      return validator;
    },
    /** Whether the owner's validator for `key` is held (tests). */
    holds(owner: string, key: string): boolean {
      return entries.has(entryKey(owner, key));
    },
    get size() {
      return entries.size;
    },
  };
}
