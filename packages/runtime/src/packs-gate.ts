import type { SqlDatabase } from '@hallmark/sql';

/**
 * The name a process of this release gives its PostgreSQL sessions (`application_name`):
 * `hallmark/<service>`. Releases of 2026-12-05 and before named them `<service>` alone, and read no
 * event packs (event store migration 0003); packsGate looks for those names.
 */
export function sessionNameOf(service: string): string {
  return `hallmark/${service}`;
}

/** The services whose processes, of a release before packs, would read the event log and pass packs by. */
const servicesBeforePacks = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'];

/**
 * Whether code-service may pack the first events of new codes (docs/ARCHITECTURE.md, "Packed first
 * events"): not while a process of a release before packs is connected to this database (a rolling
 * update from such a release), since its projections would read past the packs and never project
 * their codes. Such a process shows in pg_stat_activity under its bare service name (every role
 * sees other sessions' application_name). Looked up at most every `recheckMs`; a failed look-up
 * answers no (the events are then written as rows, which every release reads).
 */
export function createPacksGate(db: SqlDatabase, { recheckMs = 10_000 }: { recheckMs?: number } = {}): () => Promise<boolean> {
  let last: { at: number; allowed: Promise<boolean> } | undefined;
  return () => {
    const now = performance.now();
    if (last === undefined || now - last.at >= recheckMs) {
      const allowed = db
        .query<{ older: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                          WHERE datname = current_database() AND application_name = ANY($1::text[])) AS older`,
          [servicesBeforePacks],
        )
        .then(
          (rows) => rows[0]?.older === false,
          () => false,
        );
      last = { at: now, allowed };
    }
    return last.allowed;
  };
}
