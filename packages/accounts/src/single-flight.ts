/**
 * One load in flight per key: the callers who ask for a key while its load runs share that load's
 * answer instead of each sending the same query. A cache that expires under load (the signing key,
 * a GTIN's signer) otherwise sends one query per waiting request the moment it expires, and on
 * PGlite's one connection each of those waits for the others.
 */
export function createSingleFlight<V>() {
  const running = new Map<string, Promise<V>>();
  let generation = 0;
  return {
    /**
     * `load`'s answer for `key`, shared with whoever asks for the same key before it ends. `store`
     * (the caller's cache) runs with the answer unless `forget` ran since the load began.
     */
    run(key: string, load: () => Promise<V>, store: (value: V) => void): Promise<V> {
      const existing = running.get(key);
      if (existing) return existing;
      const startedIn = generation;
      const shared: Promise<V> = load()
        .then((value) => {
          if (startedIn === generation) store(value);
          return value;
        })
        .finally(() => {
          if (running.get(key) === shared) running.delete(key);
        });
      running.set(key, shared);
      return shared;
    },
    /** What was loaded may be stale (a broadcast said so): later callers load afresh, and loads now running store nothing. */
    forget(): void {
      running.clear();
      generation++;
    },
  };
}
