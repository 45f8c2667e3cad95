import type { SqlExecutor } from '@hallmark/sql';

/** How far ahead of its clock a replica writes the lease (`checkpoint_clock`, migration 0010). */
export const checkpointLeaseMs = 1_000;

/**
 * The time a checkpoint signed now carries. A checkpoint says the tree had its size at its time, so
 * an auditor asking for "the history as of T or later" takes the newest-dated checkpoint as the most
 * complete: a clock stepped back must not date a larger tree before a smaller one.
 *
 * Every time handed out is within a lease held in the database (`checkpoint_clock.lease_until`),
 * which a replica moves to its clock plus `leaseMs` before handing out a time past it (asking again
 * until the lease it reads covers the time), and again in the background each time its own clock
 * has moved half a lease: one write every half second per replica, not one a checkpoint. The time
 * handed out is the clock's, but never before one this process handed out already (kept in memory),
 * nor more than `leaseMs` before the lease it last read, which another replica (or this one before a
 * restart) may have written ahead of this clock. So a checkpoint is never dated before one this
 * replica signed, nor more than about a second and a half before one any replica signed (clocks that
 * far apart, or a step back across a restart).
 */
export function createCheckpointClock(db: SqlExecutor, clock: () => Date, leaseMs = checkpointLeaseMs) {
  let leaseUntil = Number.NEGATIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  // This clock's reading when it last asked for a lease: renewals follow this clock, not the lease
  // read (another replica's clock may have written it far ahead of this one).
  let askedAt = Number.NEGATIVE_INFINITY;
  let renewing: Promise<void> | undefined;
  const renew = (now: number): Promise<void> => {
    renewing ??= (async () => {
      askedAt = now;
      const rows = await db.query<{ lease_until: Date | string }>(
        'UPDATE checkpoint_clock SET lease_until = greatest(lease_until, $1::timestamptz) RETURNING lease_until',
        [new Date(now + leaseMs)],
      );
      const until = rows[0] ? new Date(rows[0].lease_until).getTime() : Number.NaN;
      if (!Number.isFinite(until)) throw new Error('checkpoint_clock has no row (compliance migration 0010)');
      leaseUntil = Math.max(leaseUntil, until);
      // A lease further ahead than the one asked for: another clock runs ahead of this one.
      latest = Math.max(latest, until - leaseMs);
    })().finally(() => {
      renewing = undefined;
    });
    return renewing;
  };
  return async (): Promise<Date> => {
    let now = clock().getTime();
    // A renewal in flight may have been asked for an earlier reading: ask again until the lease covers it.
    while (now > leaseUntil) {
      await renew(now);
      now = clock().getTime();
    }
    if (now - askedAt >= leaseMs / 2 || now < askedAt) renew(now).catch(() => {}); // the next one past the lease waits for it
    latest = Math.max(latest, now);
    return new Date(latest);
  };
}
