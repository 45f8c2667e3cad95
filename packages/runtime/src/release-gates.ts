import type { SqlDatabase } from '@hallmark/sql';

/**
 * Rolling updates: a change to what is stored that an older release cannot read waits until no
 * process of such a release is connected to the database. Every process names its PostgreSQL
 * sessions (`application_name`) by its service and release, and every role sees other sessions'
 * names in pg_stat_activity; a process holds its subscriptions' LISTEN session as long as it runs.
 *
 * The names by release:
 * - `<service>`: releases of 2026-12-05 and before, which read no event packs;
 * - `hallmark/<service>`: releases of 2026-12-06 before link forms (code-service migration 0009);
 * - `hallmark/<service>/2`: releases with link forms, before signing key forms (code-service
 *   migration 0010, verify-service migration 0012), which read a code's key id from its row only;
 * - `hallmark/<service>/3`: this release (sessionNameOf).
 */
export function sessionNameOf(service: string): string {
  return `hallmark/${service}/3`;
}

/** The services whose processes, of a release before packs, would read the event log and pass packs by. */
const servicesBeforePacks = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'];

/** code-service's sessions of releases before link forms: they read a code's link from its row only. */
const codeServicesBeforeLinkForms = ['code-service', 'hallmark/code-service'];

/** A service's sessions of the releases before signing key forms: they read a code's key id from its row only. */
const beforeKeyForms = (service: 'code-service' | 'verify-service') => [service, `hallmark/${service}`, `hallmark/${service}/2`];

/**
 * Whether no session named one of `olderNames` is connected to this database: a gate that opens
 * once the last process of the releases that bear those names has gone. Looked up at most every
 * `recheckMs`; a failed look-up answers no (the older way of storing, which every release reads).
 */
function createOlderSessionsGate(
  db: SqlDatabase,
  olderNames: readonly string[],
  { recheckMs = 10_000 }: { recheckMs?: number } = {},
): () => Promise<boolean> {
  let last: { at: number; allowed: Promise<boolean> } | undefined;
  return () => {
    const now = performance.now();
    if (last === undefined || now - last.at >= recheckMs) {
      const allowed = db
        .query<{ older: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                          WHERE datname = current_database() AND application_name = ANY($1::text[])) AS older`,
          [olderNames],
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

/**
 * Whether code-service may pack the first events of new codes (docs/ARCHITECTURE.md, "Packed first
 * events"): not while a process of a release before packs is connected to this database (a rolling
 * update from such a release), since its projections would read past the packs and never project
 * their codes. A failed look-up answers no (the events are then written as rows, which every release reads).
 */
export function createPacksGate(db: SqlDatabase, options: { recheckMs?: number } = {}): () => Promise<boolean> {
  return createOlderSessionsGate(db, servicesBeforePacks, options);
}

/**
 * Whether code-service may store a new code's link as its link form (docs/ARCHITECTURE.md, "What is
 * stored per code"): not while a code-service of a release before link forms is connected, which
 * would answer such a code's link as null. A failed look-up answers no (the link is then stored whole).
 */
export function createLinkFormsGate(db: SqlDatabase, options: { recheckMs?: number } = {}): () => Promise<boolean> {
  return createOlderSessionsGate(db, codeServicesBeforeLinkForms, options);
}

/**
 * Whether `service` may store a new code's signing key id by number (docs/ARCHITECTURE.md, "What
 * is stored per code": code-service's link forms, verify-service's `directory_keys`): not while a
 * process of that service of a release before them is connected, which would read the row's key id
 * as null. A failed look-up answers no (the key id is then stored whole).
 */
export function createKeyFormsGate(
  db: SqlDatabase,
  service: 'code-service' | 'verify-service',
  options: { recheckMs?: number } = {},
): () => Promise<boolean> {
  return createOlderSessionsGate(db, beforeKeyForms(service), options);
}
