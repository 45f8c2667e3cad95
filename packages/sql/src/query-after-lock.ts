import type { OneTripStatement, SqlDatabase } from './sql-database.ts';

/**
 * Takes a transaction-scoped lock (`lock`, a statement such as `pg_advisory_xact_lock`) and runs
 * `statement` after it, in one transaction; answers the statement's rows. Its snapshot is taken
 * after the lock, so it sees what the lock's previous holder committed. Where the database runs
 * statements in one round trip (PGlite in its worker), both go together and the transaction holds
 * PGlite's one connection for their work only, never while the event loop gets round to the second.
 */
export async function queryAfterLock<Row>(db: SqlDatabase, lock: OneTripStatement, statement: OneTripStatement): Promise<Row[]> {
  if (db.runInOneTrip) {
    const outcome = await db.runInOneTrip([
      { text: lock.text, params: lock.params },
      { text: statement.text, params: statement.params },
    ]);
    // Neither statement expects rows, so the trip commits or rejects.
    if (!outcome.committed) throw new Error('a trip without expected rows was rolled back');
    return outcome.rows[1] as Row[];
  }
  return db.transaction(async (tx) => {
    await tx.query(lock.text, lock.params);
    return tx.query<Row>(statement.text, statement.params);
  });
}
